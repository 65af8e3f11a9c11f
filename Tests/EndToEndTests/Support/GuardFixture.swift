import Foundation
import Testing
import SystemKit
import TestSupport
import Varlink
import VarlinkClientKit

/// A real Guard process on a temporary socket and state folder, with a
/// throwaway child and guardian, the shipped pam.d files, and the demo app
/// installed in the child's managed app root.
final class GuardFixture: @unchecked Sendable {
    static let appID = "org.familycontrols.Demo"

    let directory: String
    let socket: String
    let stateDirectory: String
    let configPath: String
    let pamDirectory: String
    let child: ThrowawayUser
    let guardian: ThrowawayUser
    let adult: ThrowawayUser
    /// The sandbox the Guard runs in; nil: root with every capability.
    var sandbox: GuardSandbox?
    /// A command the Guard's is run under (`unshare …`), exec'ing its arguments.
    var launchPrefix: [String] = []
    /// The Guard's program: the built one, or a copy beside a stand-in inspector (``replaceInspector(with:)``).
    var program = productPath("familycontrolsd")
    private(set) var process: Process?
    private var logHandle: FileHandle?
    /// How many times this fixture started the Guard.
    private(set) var starts = 0

    var logPath: String { "\(directory)/guard.log" }
    /// The guardians' one-time-code secrets (`GuardianCodeFile=`), which the code service's pam_oath reads.
    var codeFile: String { "\(directory)/oath/users.oath" }
    var appsRoot: String { "\(directory)/apps" }
    /// Homes the children own, so they can rename their own `Applications` folder.
    var homesRoot: String { "\(directory)/homes" }

    /// The child's copy of the demo app.
    var appDirectory: String { "\(appsRoot)/\(child.name)/\(Self.appID)" }
    var appExecutable: String { "\(appDirectory)/familycontrols-demo" }

    init(extraConfiguration: String = "", sandbox: GuardSandbox? = GuardSandbox.fromEnvironment) throws {
        self.sandbox = sandbox
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        socket = "\(directory)/guard.socket"
        stateDirectory = "\(directory)/state"
        configPath = "\(directory)/familycontrols.conf"
        pamDirectory = "\(directory)/pam.d"
        child = try makeThrowawayUser(prefix: "k", password: true)
        guardian = try makeThrowawayUser(prefix: "p", password: true)
        adult = try makeThrowawayUser(prefix: "a", password: true)
        try FileManager.default.createDirectory(atPath: pamDirectory, withIntermediateDirectories: true)
        for service in ["familycontrols-guardian", "familycontrols-individual"] {
            try FileManager.default.copyItem(atPath: "\(packageRoot)/pam.d/\(service)", toPath: "\(pamDirectory)/\(service)")
        }
        // The shipped code service, its users file in this fixture's folder.
        let codeService = try String(contentsOfFile: "\(packageRoot)/pam.d/familycontrols-guardian-code", encoding: .utf8)
        try codeService.replacingOccurrences(of: "/etc/familycontrols/oath/users.oath", with: codeFile)
            .write(toFile: "\(pamDirectory)/familycontrols-guardian-code", atomically: true, encoding: .utf8)
        try writeConfiguration(extra: extraConfiguration)
        for user in [child, adult] { try installDemo(for: user) }
    }

    deinit { tearDown() }

    func writeConfiguration(children: [String]? = nil, extra: String = "") throws {
        // A test's Guard never moves a Flatpak app into the machine's own Guard
        // installation: unless the test names a move service, apps are locked in place.
        var extra = extra
        if !extra.contains("MoveService=") {
            extra = extra.contains("[Flatpak]\n") ? extra.replacingOccurrences(of: "[Flatpak]\n", with: "[Flatpak]\nMoveService=no\n")
                : extra + "\n[Flatpak]\nMoveService=no\n"
        }
        let text = """
            [Family]
            Guardians=\(guardian.name)
            Children=\((children ?? [child.name]).joined(separator: " "))

            [Apps]
            Roots=\(appsRoot)/%u \(homesRoot)/%u/Applications

            [Authentication]
            \(extra.contains("PromptTimeout=") ? "" : "PromptTimeout=60s")
            GuardianCodeFile=\(codeFile)
            \(extra)
            """
        try text.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Copies the demo into `ROOT/USER/APPID/` with its desktop entry, owned by `user`.
    @discardableResult
    func installDemo(for user: ThrowawayUser, appID: String = GuardFixture.appID, capability: Bool = true,
                     inHome: Bool = false) throws -> String {
        let root = inHome ? "\(homesRoot)/\(user.name)" : "\(appsRoot)/\(user.name)"
        let app = inHome ? "\(root)/Applications/\(appID)" : "\(root)/\(appID)"
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        chmod(appsRoot, 0o755)
        chmod(homesRoot, 0o755)
        try copyProgram(productPath("familycontrols-demo"), to: "\(app)/familycontrols-demo")
        var entry = try String(contentsOfFile: "\(packageRoot)/Config/demo/org.familycontrols.Demo.desktop", encoding: .utf8)
        if !capability { entry = entry.replacingOccurrences(of: "X-FamilyControls=true", with: "X-FamilyControls=false") }
        try entry.write(toFile: "\(app)/\(appID).desktop", atomically: false, encoding: .utf8)
        try sh("chown -R \(user.name):\(user.name) '\(root)'").requireSuccess()
        return app
    }

    /// Starts `familycontrolsd` and waits until it answers.
    /// `environment` is added to the Guard's own (a test's pause point, say).
    func start(environment: [String: String] = [:]) async throws {
        try await offload { try self.startBlocking(environment: environment) }
    }

    private func startBlocking(environment: [String: String]) throws {
        // One log across restarts: tests read what every run of the Guard said.
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        let guardCommand = [program, "--socket", socket, "--state-dir", stateDirectory,
                            "--config", configPath, "--pam-dir", pamDirectory]
        let command = launchPrefix + (sandbox?.wrap(guardCommand, sharing: directory) ?? guardCommand)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardError = log
        process.standardOutput = log
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
        self.process = process
        logHandle = log
        starts += 1
        // A pure wait, ended by the first answer: 60 s, for a machine running
        // the whole suite (a start took over 20 s there, while a directory
        // test had SSSD in nsswitch.conf and the release build was compiling).
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if (try? VarlinkClient(path: socket, connectTimeout: .milliseconds(200))) != nil { return }
            guard process.isRunning else { throw FixtureError("familycontrolsd exited: \(log)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // What it said so far, and where each of its threads waits, for the failure's reader.
        let stacks = (try? TestSupport.run("/bin/sh", ["-c", "for t in /proc/\(process.processIdentifier)/task/*; do "
            + "echo \"$t $(cat $t/comm) $(cat $t/wchan)\"; done; ps -o pid,stat,wchan:20,args --ppid \(process.processIdentifier)"]))?
            .standardOutput ?? ""
        throw FixtureError("familycontrolsd did not answer on \(socket) within 60 s:\n\(self.log.suffix(4000))\n\(stacks)")
    }

    /// Waits until the Guard's start-up reconcile, which runs beside serving, has finished.
    func waitUntilReconciled() async throws {
        let wanted = starts
        for _ in 0..<600 {
            if log.components(separatedBy: " reconcile: ").count - 1 >= wanted { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw FixtureError("the Guard did not finish reconciling within 15 s")
    }

    /// The pid of the Guard serving the socket, as the kernel tells its peer
    /// (`SO_PEERCRED`): ``process`` may be a sandbox's wrapper in front of it.
    func servingPID() throws -> pid_t {
        // Closed when released.
        let socket = try Socket.makeUnixStream(nonBlocking: false)
        let connected = try UnixSocketAddress(path: self.socket).withSocketAddress { address, length throws(Errno) in
            connect(socket.rawValue, address, length)
        }
        guard connected == 0 else { throw FixtureError("cannot connect to \(self.socket): errno \(errno)") }
        return try Socket.peerCredentials(of: socket.rawValue).pid
    }

    /// Stops the Guard with `signal` and waits for it.
    func stop(signal: Int32 = SIGTERM) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        self.process = nil
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Runs the Guard from a copy of its program in this fixture's `bin`,
    /// beside a shell script `script` as its inspector, where it looks first.
    func replaceInspector(with script: String) throws {
        let bin = "\(directory)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        chmod(bin, 0o755)
        try copyProgram(productPath("familycontrolsd"), to: "\(bin)/familycontrolsd")
        #expect(FileManager.default.createFile(atPath: "\(bin)/familycontrols-inspect", contents: Data("#!/bin/sh\n\(script)\n".utf8)))
        chmod("\(bin)/familycontrols-inspect", 0o755)
        program = "\(bin)/familycontrolsd"
    }

    /// Runs the demo app as `user` (default: the child), answering prompts from `input`.
    func app(_ arguments: [String], as user: ThrowawayUser? = nil, input: String = "",
             executable: String? = nil, environment: [String: String] = [:]) async throws -> ProcessResult {
        let who = user ?? child
        let command = commandLine(as: who, executable: executable ?? appExecutable(for: who), arguments, environment: environment)
        return try await run(command[0], Array(command.dropFirst()), input: input)
    }

    /// Runs `executable` as `user`, with nothing in its environment but the
    /// Guard's socket and `environment`.
    func commandLine(as user: ThrowawayUser, executable: String, _ arguments: [String],
                     environment: [String: String] = [:]) -> [String] {
        var env = ["FAMILYCONTROLS_SOCKET=\(socket)"]
        for (key, value) in environment { env.append("\(key)=\(value)") }
        return ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/usr/bin/env", "-i"]
            + env + [executable] + arguments
    }

    func appExecutable(for user: ThrowawayUser) -> String {
        "\(appsRoot)/\(user.name)/\(Self.appID)/familycontrols-demo"
    }

    /// The answers that approve as the guardian.
    var approvingInput: String { "continue\n\(guardian.name)\n\(guardian.password ?? "")\n" }

    /// Runs `familyctl` against this Guard.
    func familyctl(_ arguments: [String]) async throws -> ProcessResult {
        try await run(productPath("familyctl"), arguments + ["--socket", socket])
    }

    /// Calls the Guard as root.
    func call(_ method: String, _ parameters: JSONObject = [:]) async throws -> JSONObject {
        let socket = self.socket
        return try await offload {
            let client = try VarlinkClient(path: socket, connectTimeout: .seconds(2), replyTimeout: .seconds(30))
            defer { client.close() }
            return try client.call("org.familycontrols.guard.\(method)", parameters: parameters)
        }
    }

    /// The status the Guard holds for (user, app), from `ListAuthorizations`.
    func storedStatus(user: String? = nil, appID: String = GuardFixture.appID) async throws -> String {
        let who = user ?? child.name
        let list = try await call("ListAuthorizations", ["user": .string(who)])["authorizations"]?.arrayValue ?? []
        let row = list.compactMap(\.objectValue).first { $0["app"]?.stringValue == appID }
        return row?["status"]?.stringValue ?? "notDetermined"
    }

    func authorization(user: String? = nil, appID: String = GuardFixture.appID) async throws -> JSONObject? {
        let list = try await call("ListAuthorizations", ["user": .string(user ?? child.name)])["authorizations"]?.arrayValue ?? []
        return list.compactMap(\.objectValue).first { $0["app"]?.stringValue == appID }
    }

    /// Audit rows straight from the store, oldest first: "actor action user app outcome".
    func auditRows() async throws -> [String] {
        let result = try await run("/usr/bin/sqlite3", ["-separator", " ", "\(stateDirectory)/familycontrols.db",
                                                  "SELECT actor, action, user, coalesce(app_id,'-'), outcome FROM audit ORDER BY id"])
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    private var tornDown = false

    func tearDown() {
        guard !tornDown else { return }
        tornDown = true
        stop(signal: SIGKILL)
        try? logHandle?.close()
        if let sandbox { sandbox.unshare(directory) }
        // Locks leave immutable files behind; clear them so the folder can go.
        _ = try? run("/usr/bin/chattr", ["-R", "-i", directory])
        try? FileManager.default.removeItem(atPath: directory)
        for user in [child, guardian, adult] { removeThrowawayUser(user) }
    }
}

extension ProcessResult {
    @discardableResult
    func requireSuccess() throws -> ProcessResult {
        guard succeeded else { throw FixtureError("command failed (\(status)): \(standardError)") }
        return self
    }
}

/// Runs `body` with a started Guard fixture, tearing everything down after.
func withGuard<R>(extraConfiguration: String = "", sandbox: GuardSandbox? = GuardSandbox.fromEnvironment,
                  _ body: (GuardFixture) async throws -> R) async throws -> R {
    // Never while a directory test has SSSD in the machine's lookups.
    try await NameServiceGate.sharing {
        // Making users and starting processes blocks: never on the cooperative pool.
        let fixture = try await offload { try GuardFixture(extraConfiguration: extraConfiguration, sandbox: sandbox) }
        return try await tearingDown(fixture, with: { $0.tearDown() }) { fixture in
            try await fixture.start()
            return try await body(fixture)
        }
    }
}

/// Whether the end-to-end tests can run: root, useradd, and the built products.
var canRunGuard: Bool {
    canManageUsers && productExists("familycontrolsd") && productExists("familycontrols-demo") && productExists("familyctl")
}

import Foundation
import Testing
import TestSupport

/// Runs `body` with a Flatpak child on a system bus with polkitd and the
/// system helper, the real move service listening on its socket under
/// `systemd-socket-activate`, and a real Guard configured with it.
/// `installed: false`: the child has only the test repository, and
/// `prepare` installs the app as the attack wants it; `extra(child)` is
/// appended to the Guard's `[Flatpak]` section.
/// `serviceInspector`: a shell script the move service runs as its
/// inspector instead of the real one (the service then runs from a copy of
/// its program beside it, where it looks first); the Guard keeps the real one.
func withFlatpakMoveService(installed: Bool = true, prepare: (FlatpakChild) async throws -> Void = { _ in },
                             extra: (FlatpakChild) -> String = { _ in "" }, serviceInspector: String? = nil,
                             _ body: (GuardFixture, FlatpakChild, FlatpakSystemServices) async throws -> Void) async throws {
    try await withFlatpakChild(installed: installed, systemHelper: true) { child in
        try await prepare(child)
        let services = try #require(child.services)
        try FileManager.default.createDirectory(atPath: "\(child.directory)/state", withIntermediateDirectories: true)
        let service = try await FlatpakMoveServiceProcess.start(for: child, options: [
            "--state-dir", "\(child.directory)/state", "--installation-path", services.installation,
            "--flatpak-config-dir", services.configurationDirectory,
        ], inspector: serviceInspector)
        defer { service.stop() }
        let socket = service.socket

        let guardd = try await offload { try GuardFixture(sandbox: GuardSandbox.fromEnvironment) }
        try await NameServiceGate.sharing {
            try await tearingDown(guardd, with: { $0.tearDown() }) { guardd in
                try guardd.writeConfiguration(children: [child.user.name], extra: """

                    [Flatpak]
                    MoveService=\(socket)
                    GuardInstallation=\(services.installation)
                    \(extra(child))
                    """)
                try await guardd.start()
                try await body(guardd, child, services)
            }
        }
    }
}


extension GuardFixture {
    /// The child's demo asks (answering the alert of a first request); returns
    /// the request a guardian sees and the running app.
    func pendingFlatpakRequest(_ child: FlatpakChild,
                                alert: Bool = false) async throws -> ([String: Any], RunningApp) {
        let app = try child.startDemo(socket: socket)
        if alert { _ = try await app.waitForPendingRequest() }
        for _ in 0..<200 {
            let listed = try await familyctlAsGuardian(["requests", "--json"])
            let object = try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
            if let found = (object?["requests"] as? [[String: Any]])?.first(where: { $0["app"] as? String == FlatpakChild.appID }) {
                return (found, app)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        app.stop()
        throw FixtureError("no request came: \(app.standardError)\n\(log)")
    }

    /// The guardian approves or denies request `request`; returns the app's end.
    func decideFlatpakRequest(_ request: [String: Any], _ app: RunningApp, approve: Bool) async throws -> ProcessResult {
        defer { app.stop() }
        let id = try #require(request["id"] as? Int)
        let decided = try await familyctlAsGuardian([approve ? "approve" : "deny", String(id), "--stdin"],
                                                    input: "\(guardian.password ?? "")\n")
        #expect(decided.status == 0, "\(decided.standardError)")
        app.endInput()
        let status = await app.exitStatus()
        return ProcessResult(status: status, standardOutput: app.standardOutput, standardError: app.standardError)
    }
}

extension FlatpakSystemServices {
    /// `app/APPID/ARCH/BRANCH` in the Guard's installation.
    var guardBranch: String {
        "\(installation)/app/\(FlatpakChild.appID)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)"
    }

    /// The commit the Guard's installation deploys of the app, or nil.
    var guardActive: String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(guardBranch)/active")
    }

    /// The commit the Guard's installation deploys of the test runtime, or nil.
    var guardRuntimeActive: String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(installation)/\(FlatpakTestRepository.runtimeRef)/active")
    }
}

/// The move service as systemd runs it, `familycontrolsd
/// --flatpak-move-connection` for each connection to its socket, under
/// `systemd-socket-activate`. Detached (setsid), its pid in a file, ended
/// by that pid: a long-lived child of the test process would share its
/// pipes and its reaping with every command the test runs.
struct FlatpakMoveServiceProcess {
    let socket: String
    let pidFile: String

    /// Starts it on `CHILD/move.socket` with `options`, and waits for its socket.
    /// `inspector`: a shell script it runs as its inspector, from a copy of its program beside it.
    static func start(for child: FlatpakChild, options: [String], inspector: String? = nil) async throws -> FlatpakMoveServiceProcess {
        let service = FlatpakMoveServiceProcess(socket: "\(child.directory)/move.socket",
                                                pidFile: "\(child.directory)/move-service.pid")
        var program = productPath("familycontrolsd")
        if let inspector {
            let bin = "\(child.directory)/move-bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            chmod(bin, 0o755)
            try copyProgram(program, to: "\(bin)/familycontrolsd")
            try writeProgram("#!/bin/sh\n\(inspector)\n", to: "\(bin)/familycontrols-inspect")
            program = "\(bin)/familycontrolsd"
        }
        let command = ["/usr/bin/systemd-socket-activate", "--listen=\(service.socket)", "--accept", "--inetd",
                       program, "--flatpak-move-connection"] + options
        try await run("/bin/sh", ["-c", "setsid \"$@\" </dev/null >/dev/null 2>&1 & echo $! > '\(service.pidFile)'", "service"]
                      + command).requireSuccess()
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: service.socket) {
            try await Task.sleep(for: .milliseconds(25))
        }
        return service
    }

    func stop() {
        if let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8))
            .flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
            kill(pid, SIGKILL)
        }
    }
}

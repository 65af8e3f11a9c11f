import Foundation
import TestSupport

/// A throwaway child with a real home, a private system bus and the test
/// repository added as a `--user` remote: what a child with Flatpak apps has.
/// Every command runs as the child (`setpriv`, no supplementary groups) with
/// a clean environment: `HOME`, `XDG_RUNTIME_DIR` and the bus address.
final class FlatpakChild: @unchecked Sendable {
    static let remote = "fctest"
    static var appID: String { FlatpakTestRepository.appID }

    let user: ThrowawayUser
    let repository: FlatpakTestRepository
    /// Holds the home, the runtime folder and the bus; removed after.
    let directory: String
    private let bus: PrivateSystemBus?
    /// With `systemHelper: true`: polkitd, the system helper and the Guard's installation on the bus.
    let services: FlatpakSystemServices?
    private let runtimeDirectory: String
    private var running: [RunningFlatpakApp] = []

    var home: String { user.home }
    /// The child's per-user installation (`flatpak --user`).
    var installation: String { "\(home)/.local/share/flatpak" }
    /// `app/APPID/ARCH/BRANCH`: the deployments and the `active` link.
    var branchFolder: String {
        "\(installation)/app/\(Self.appID)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)"
    }

    /// The deployment of `commit`; its `files/` is the sandbox's `/app`.
    func deployment(_ commit: String) -> String { "\(branchFolder)/\(commit)" }

    /// The commit the `active` link points at, or nil when there is no link.
    func activeCommit() -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(branchFolder)/active")
    }

    fileprivate init(repository: FlatpakTestRepository, systemHelper: Bool = false) throws {
        self.repository = repository
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let home = "\(directory)/home"
        user = try makeThrowawayUser(prefix: "f", password: false, home: home)
        runtimeDirectory = "\(directory)/run"
        do {
            for folder in [home, runtimeDirectory] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
                chown(folder, user.uid, user.gid)
            }
            chmod(runtimeDirectory, 0o700)
            if systemHelper {
                services = try FlatpakSystemServices(in: directory, child: user.name)
                bus = nil
            } else {
                services = nil
                bus = try PrivateSystemBus(in: directory)
            }
        } catch {
            removeThrowawayUser(user)
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// The child's environment, and nothing of the test process's.
    var environment: [String] {
        ["HOME=\(home)", "USER=\(user.name)", "LOGNAME=\(user.name)", "PATH=/usr/bin:/bin",
         "XDG_RUNTIME_DIR=\(runtimeDirectory)", "DBUS_SYSTEM_BUS_ADDRESS=\(services?.address ?? bus?.address ?? "")",
         "LANG=C.UTF-8"] + (services.map { ["FLATPAK_CONFIG_DIR=\($0.configurationDirectory)"] } ?? [])
    }

    /// The command line that runs `command` as the child.
    func commandLine(_ command: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
         "/usr/bin/env", "-i"] + environment + command
    }

    /// Runs `flatpak ARGUMENTS` as the child.
    func flatpak(_ arguments: [String]) async throws -> ProcessResult {
        let command = commandLine(["/usr/bin/flatpak"] + arguments)
        return try await run(command[0], Array(command.dropFirst()))
    }

    /// Runs `command` with `/bin/sh` as the child.
    func shell(_ command: String) async throws -> ProcessResult {
        let line = commandLine(["/bin/sh", "-c", command])
        return try await run(line[0], Array(line.dropFirst()))
    }

    /// Adds the test repository as a remote and installs the app (and its
    /// runtime) from it, as the child.
    func install() async throws {
        try await flatpak(["remote-add", "--user", "--no-gpg-verify", Self.remote, repository.repository])
            .requireSuccess()
        try await flatpak(["install", "--user", "-y", "--noninteractive", Self.remote, Self.appID]).requireSuccess()
    }

    /// `flatpak update --user -y APPID`, as the child.
    func update() async throws -> ProcessResult {
        try await flatpak(["update", "--user", "-y", "--noninteractive", Self.appID])
    }

    /// `flatpak uninstall --user -y APPID`, as the child.
    func uninstall() async throws -> ProcessResult {
        try await flatpak(["uninstall", "--user", "-y", "--noninteractive", Self.appID])
    }

    /// Starts `flatpak run APPID` as the child under its own session bus
    /// (`dbus-run-session`) and waits until the app runs in its sandbox.
    func start() async throws -> RunningFlatpakApp {
        // Another test's flatpak may hold /run/flatpak/per-app-dirs-ref a moment (its
        // clean-up takes the lock bubblewrap asks for without waiting), or the last
        // instance's clean-up may remove the app's per-app tmp folder while this run
        // mounts it ("bwrap: Can't get type of source …/.flatpak/APPID/tmp"): start again then.
        for attempt in 1... {
            let app = try RunningFlatpakApp(command: commandLine(["/usr/bin/dbus-run-session", "--", "/usr/bin/flatpak",
                                                                  "run", Self.appID]),
                                            output: "\(directory)/run-\(running.count).out")
            running.append(app)
            do {
                try await app.waitUntilSandboxed(child: self)
                return app
            } catch where attempt < 3 && (app.output.contains("Unable to lock file /run/flatpak/")
                                            || app.output.contains("Can't get type of source") && app.output.contains("/.flatpak/")) {
                try await Task.sleep(for: .milliseconds(500))
            }
        }
        fatalError("unreachable")
    }

    private var tornDown = false

    fileprivate func tearDown() {
        guard !tornDown else { return }
        tornDown = true
        for app in running { app.stop() }
        // Tests lock the installation with the immutable attribute; clear it so userdel -r can remove it.
        _ = try? run("/usr/bin/chattr", ["-R", "-ia", directory])
        removeThrowawayUser(user)
        bus?.stop()
        services?.stop()
        try? FileManager.default.removeItem(atPath: directory)
        repository.remove()
    }
}

/// Runs `body` with a child who has the test app installed for their own
/// account (`installed: false`: only the remote's repository ready), then
/// removes the child, their home, the bus and the repository.
/// With `systemHelper: true` the child's system bus has polkitd and
/// `flatpak-system-helper` on it, and the Guard's installation is declared.
func withFlatpakChild<R>(installed: Bool = true, systemHelper: Bool = false,
                         _ body: (FlatpakChild) async throws -> R) async throws -> R {
    // Building the repository and making the user block: never on the cooperative pool.
    let child = try await offload { () -> FlatpakChild in
        let repository = try FlatpakTestRepository()
        do { return try FlatpakChild(repository: repository, systemHelper: systemHelper) } catch {
            repository.remove()
            throw error
        }
    }
    return try await tearingDown(child, with: { $0.tearDown() }) { child in
        if installed { try await child.install() }
        return try await body(child)
    }
}

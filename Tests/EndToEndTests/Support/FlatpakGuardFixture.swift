import Foundation
import TestSupport

/// Runs `body` with a real Guard whose one child is a Flatpak child (the
/// test app installed for their own account), `extraConfiguration` appended
/// to the Guard's configuration; removes everything after.
func withGuardedFlatpakChild<R>(installed: Bool = true, extraConfiguration: String = "",
                                _ body: (GuardFixture, FlatpakChild) async throws -> R) async throws -> R {
    try await NameServiceGate.sharing {
        try await withFlatpakChild(installed: installed) { child in
            let fixture = try await offload { try GuardFixture(sandbox: GuardSandbox.fromEnvironment) }
            return try await tearingDown(fixture, with: { $0.tearDown() }) { fixture in
                try fixture.writeConfiguration(children: [child.user.name], extra: extraConfiguration)
                try await fixture.start()
                return try await body(fixture, child)
            }
        }
    }
}

extension FlatpakChild {
    static var installedAppFolder: String { "app/\(appID)" }

    /// `app/APPID` of the child's installation: what an approval locks.
    var appFolder: String { "\(installation)/app/\(Self.appID)" }

    /// The `flatpak run` command line that runs the demo (the real app
    /// library) in the app's sandbox with `arguments`, the Guard's socket
    /// named by `FAMILYCONTROLS_SOCKET`, and its folder shared read-only
    /// unless `shareSocket` is false (an app without the grant); `runFlags`
    /// are more of `flatpak run`'s own (`--runtime=`).
    func demoCommand(_ arguments: [String], socket: String, shareSocket: Bool = true,
                     flatpakEnvironment: [String] = [], runFlags: [String] = []) -> [String] {
        let folder = URL(fileURLWithPath: socket).deletingLastPathComponent().path
        let flags = ["--command=\(FlatpakTestRepository.demo)", "--env=FAMILYCONTROLS_SOCKET=\(socket)"]
            + (shareSocket ? ["--filesystem=\(folder):ro"] : []) + runFlags
        let run = ["/usr/bin/dbus-run-session", "--", "/usr/bin/flatpak", "run"] + flags + [Self.appID] + arguments
        return flatpakEnvironment.isEmpty ? commandLine(run) : commandLine(["/usr/bin/env"] + flatpakEnvironment + run)
    }

    /// Starts the demo in the sandbox, `request --member child --stdin`, its input left open.
    func startDemo(socket: String, flatpakEnvironment: [String] = []) throws -> RunningApp {
        try RunningApp(arguments: demoCommand(["request", "--member", "child", "--stdin"], socket: socket,
                                              flatpakEnvironment: flatpakEnvironment))
    }

    /// Runs the demo in the sandbox to its end (killed after 30 s), with
    /// `input` on its standard input. Waits for the process, not for the end
    /// of its output: the session bus `dbus-run-session` starts, and the
    /// services it activates, outlive it holding its output open.
    func runDemo(_ arguments: [String], socket: String, shareSocket: Bool = true, input: String = "",
                 flatpakEnvironment: [String] = [], runFlags: [String] = []) async throws -> ProcessResult {
        let app = try RunningApp(arguments: demoCommand(arguments, socket: socket, shareSocket: shareSocket,
                                                        flatpakEnvironment: flatpakEnvironment, runFlags: runFlags))
        app.write(input)
        app.endInput()
        let status = await app.exitStatus()
        // What the app wrote just before it exited may still be in the pipe.
        try await Task.sleep(for: .milliseconds(200))
        return ProcessResult(status: status, standardOutput: app.standardOutput, standardError: app.standardError)
    }
}

extension GuardFixture {
    /// The Flatpak child's demo asks, the guardian approves from their own
    /// session (`familyctl approve ID`); returns the app's exit status and output.
    func flatpakRequestApproved(_ child: FlatpakChild, flatpakEnvironment: [String] = []) async throws -> ProcessResult {
        let app = try child.startDemo(socket: socket, flatpakEnvironment: flatpakEnvironment)
        defer { app.stop() }
        let id = try await app.waitForPendingRequest()
        let decided = try await familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardian.password ?? "")\n")
        app.endInput()
        let status = await app.exitStatus()
        return ProcessResult(status: status, standardOutput: app.standardOutput,
                             standardError: app.standardError + decided.standardError)
    }

    /// `familyctl status --json` as root: the authorization of `appID` for `user`.
    func statusJSON(user: String, appID: String) async throws -> [String: Any]? {
        let listed = try await familyctl(["status", "--json"]).requireSuccess()
        let object = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
        let rows = object?["authorizations"] as? [[String: Any]] ?? []
        return rows.first { $0["user"] as? String == user && $0["app"] as? String == appID }
    }
}

extension FlatpakChild {
    /// The `files` of the runtime the app runs on, as installed for the child.
    var runtimeFiles: String {
        "\(installation)/runtime/\(FlatpakTestRepository.runtimeID)/\(FlatpakTestRepository.architecture)/"
            + "\(FlatpakTestRepository.branch)/active/files"
    }

    /// A sandbox the child makes themself with bubblewrap (an unprivileged
    /// user namespace, as Flatpak's own): `appFiles` at `/app`, `runtime`
    /// at `/usr`, the file `info` as `/.flatpak-info`, the Guard's socket
    /// folder shared; runs the demo's `request --member child` in it with
    /// empty input, as the child.
    func runForgedSandbox(appFiles: String, runtime: String, info: String, socket: String) async throws -> ProcessResult {
        let folder = URL(fileURLWithPath: socket).deletingLastPathComponent().path
        let bwrap = ["/usr/bin/bwrap", "--unshare-user", "--unshare-pid", "--die-with-parent",
                     "--ro-bind", runtime, "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                     "--symlink", "usr/bin", "/bin", "--ro-bind", appFiles, "/app", "--ro-bind", info, "/.flatpak-info",
                     "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", folder, folder,
                     "--setenv", "FAMILYCONTROLS_SOCKET", socket,
                     "/app/bin/\(FlatpakTestRepository.demo)", "request", "--member", "child", "--stdin"]
        let app = try RunningApp(arguments: commandLine(bwrap))
        app.endInput()
        let status = await app.exitStatus()
        try await Task.sleep(for: .milliseconds(200))
        return ProcessResult(status: status, standardOutput: app.standardOutput, standardError: app.standardError)
    }

    /// Copies `source` (a folder) to `name` in the child's home, as the child: code the child wrote.
    func copyAsChild(_ source: String, to name: String) async throws -> String {
        let target = "\(home)/\(name)"
        try await shell("cp -a '\(source)/.' '\(target)/' 2>/dev/null || (mkdir -p '\(target)' && cp -a '\(source)/.' '\(target)/')")
            .requireSuccess()
        return target
    }
}

import FamilyConfiguration
import SystemKit
#if canImport(Glibc)
import Glibc
#endif

extension FamilyCtl {
    /// `familyctl agent [--if-guardian] [--config FILE]`: desktop
    /// notifications of the caller's requests and of their children's
    /// monitors that keep ending (``NotificationAgent``), or, without a
    /// notification server, the lines of `requests --watch` and of the alerts.
    static func agent(_ tokens: [String], socket: String?, open: DesktopLibraries.NotificationServerOpener) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--config"], flags: ["--if-guardian"])
        guard arguments.operands.isEmpty else { throw CommandFailure(.usage, "agent takes no operands") }
        if arguments.has("--if-guardian") {
            // For the session's autostart entry: anyone who guards nobody has nothing to watch.
            guard isGuardian(configuration: arguments["--config"] ?? GuardConfiguration.defaultPath) else { return }
        }
        let notifier: any NotificationServer
        do throws(NotificationServerUnavailable) {
            notifier = try open()
        } catch {
            writeToStandardError("familyctl: no desktop notifications (\(error)); printing requests here instead\n")
            // Monitor alerts as lines beside the requests'; the requests' watch decides when the agent ends.
            try NotificationAgent.watchAlerts(socket: GuardConnection.socketPath(socket)) { alert in
                writeToStandardOutput("monitor alert: \(describe(alert))\n")
            } ended: { _ in }
            try requests(["--watch"], socket: socket)
            return
        }
        try NotificationAgent(notifier: notifier, socket: GuardConnection.socketPath(socket)).run()
    }

    /// Whether the calling user is named as a guardian in `configuration`;
    /// false when it cannot be read (the agent then stays quiet).
    private static func isGuardian(configuration path: String) -> Bool {
        guard let configuration = try? GuardConfiguration.load(path: path),
              let account = try? UserDatabase.user(id: getuid()) else { return false }
        return (try? Family(configuration: configuration).guardsSomeone(account)) ?? false
    }
}

#if canImport(Glibc)
import Glibc
#endif
import GuardSessions
import SystemKit

/// Tells a child something in their sessions: a line on their terminals
/// (``TerminalMessenger``), and a desktop notification in each session with
/// a session bus, posted by a short helper (``DesktopNotification``, the
/// Guard's own program) run as the child, with nothing in its environment
/// but the session's bus, runtime folder, home and `PATH`. Not in
/// secure-execution mode: sd-bus reads the bus's address with
/// `secure_getenv(3)`, and the helper holds nothing the child may not see
/// (it runs with the child's own rights, and posts the Guard's words).
/// A helper that has not finished within ``timeout`` is killed.
package struct DesktopMessenger: SessionMessenger {
    /// The helper program: the Guard's own.
    package var helper: String
    /// The notification's title, above the message.
    package var summary: String
    package var terminal: TerminalMessenger
    package var timeout: Duration

    package init(helper: String, summary: String = "Time limit", terminal: TerminalMessenger = TerminalMessenger(),
                 timeout: Duration = .seconds(4)) {
        self.helper = helper
        self.summary = summary
        self.terminal = terminal
        self.timeout = timeout
    }

    package func tell(_ message: String, in sessions: [MonitorSession]) -> [String] {
        var told = terminal.tell(message, in: sessions)
        guard let uid = sessions.first?.session.uid, let account = (try? UserDatabase.user(id: uid)) ?? nil else { return told }
        var buses: Set<String> = []
        for session in sessions {
            guard let environment = Self.environment(of: session.session, account: account),
                  let bus = environment.first, buses.insert(bus).inserted else { continue }
            if post(message, as: account, environment: environment) { told.append("the desktop of session \(session.name)") }
        }
        return told
    }

    /// The session's bus (first) and runtime folder, when it has a bus the user owns.
    static func environment(of session: LoginSession, account: UserAccount) -> [String]? {
        let runtime = session.runtimeDirectory ?? "/run/user/\(account.uid)"
        var info = stat()
        let hasRuntime = stat(runtime, &info) == 0 && info.st_uid == account.uid
        var bus = session.bus
        if bus == nil, hasRuntime, stat(runtime + "/bus", &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
            bus = "unix:path=\(runtime)/bus"
        }
        guard let bus else { return nil }
        return ["DBUS_SESSION_BUS_ADDRESS=\(bus)"] + (hasRuntime ? ["XDG_RUNTIME_DIR=\(runtime)"] : [])
            + ["HOME=\(account.home)", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"]
    }

    /// Runs the helper as `account`; whether it posted the notification.
    private func post(_ message: String, as account: UserAccount, environment: [String]) -> Bool {
        guard let output = try? FileDescriptor.open("/dev/null", O_WRONLY | O_CLOEXEC) else { return false }
        defer { output.close() }
        let process: UserProcess
        do throws(UserProcess.SpawnError) {
            process = try UserProcess.spawn(helper, arguments: [helper, DesktopNotification.modeArgument, summary, message],
                                            environment: environment, directory: "/", uid: account.uid, gid: account.gid,
                                            realGID: account.gid, groups: UserDatabase.groupIDs(of: account),
                                            output: output.rawValue)
            try process.release()
        } catch {
            return false
        }
        let deadline = MonotonicInstant.now.advanced(by: timeout)
        while process.exit == nil {
            if MonotonicInstant.now >= deadline {
                process.send(SIGKILL)
                _ = try? Poll.wait(for: Int16(POLLIN), on: process.pidfd.rawValue, until: .now.advanced(by: .seconds(1)))
                _ = process.poll()
                return false
            }
            _ = try? Poll.wait(for: Int16(POLLIN), on: process.pidfd.rawValue, until: deadline)
            _ = process.poll()
        }
        return process.exit == .exited(0)
    }
}

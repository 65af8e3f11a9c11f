import Foundation
import GuardIdentity
import GuardSessions
import GuardStore
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// The keeper with real sessions: a real throwaway child, a login session
/// recorded as the PAM module records one (``LoginSessions``, its leader
/// pinned by pidfd), the child's processes on a terminal of their own, and
/// the Guard's real ``SessionEnforcer`` without logind. What the child sees
/// on their terminal, and what becomes of their session.
@Suite(.serialized, .enabled(if: canManageUsers && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"),
                                 "needs root, useradd, setpriv(1) and setsid(1)"))
struct TimeKeeperSessionTests {
    /// A pseudo-terminal whose other end the child owns, as `login` and sshd leave it.
    private final class Terminal {
        let master: CInt
        let path: String

        init(owner: ThrowawayUser) throws {
            master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            var unlock: CInt = 0, number: CUnsignedInt = 0
            // TIOCSPTLCK and TIOCGPTN: what unlockpt(3) and ptsname(3) do.
            guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
                throw FixtureError("no pseudo-terminal: errno \(errno)")
            }
            path = "/dev/pts/\(number)"
            guard chown(path, owner.uid, owner.gid) == 0, chmod(path, 0o620) == 0 else { throw FixtureError("chown \(path)") }
            _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        }

        /// What was written to the terminal since last read.
        func read() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = Glibc.read(master, &buffer, buffer.count)
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        deinit { close(master) }
    }

    /// A root leader in a kernel session of its own (as `login` opens one),
    /// and the child's shell under it on `terminal`; their pids.
    private func startSession(of child: ThrowawayUser, on terminal: Terminal, in directory: String) throws -> [String: pid_t] {
        chmod(directory, 0o755)
        let output = "\(directory)/pids"
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
        process.arguments = ["-MPOSIX", "-e", "sigprocmask(SIG_SETMASK, POSIX::SigSet->new, undef) or die; exec @ARGV or die",
                             "/usr/bin/setsid", "/bin/sh", "-c", """
                                echo leader $$
                                /usr/bin/setpriv --reuid=\(child.uid) --regid=\(child.gid) --clear-groups \
                                    /bin/sh -c 'echo shell $$; exec sleep 1000' <\(terminal.path) &
                                wait
                                """]
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        var pids: [String: pid_t] = [:]
        guard waitFor(seconds: 10, {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                if words.count == 2, let pid = pid_t(words[1]) { pids[String(words[0])] = pid }
            }
            return pids.count == 2
        }) else { throw FixtureError("the session did not start") }
        return pids
    }

    @Test func aShortAllowanceWarnsOnTheChildsTerminalThenEndsTheSessionAndTheFileSaysTheTimeIsUsedUp() async throws {
        try await withThrowawayUser(prefix: "tk") { child in
            try await withTemporaryDirectory { directory in
                let terminal = try Terminal(owner: child)
                let pids = try startSession(of: child, on: terminal, in: directory)
                let leader = try #require(pids["leader"]), shell = try #require(pids["shell"])
                let pidfds = [try #require(ProcessHandle.open(pid: leader)), try #require(ProcessHandle.open(pid: shell))]
                defer { for pidfd in pidfds { _ = ProcessHandle.send(SIGKILL, to: pidfd.rawValue) } }

                // The session as the PAM module tells it: service login, the child's terminal.
                let records = LoginSessions()
                try records.open(LoginSession(user: child.name, uid: child.uid, service: "login", tty: terminal.path,
                                              leader: leader, openedAt: .now),
                                 token: String(repeating: "a", count: 32), pidfd: pidfds[0].rawValue)
                let limits = quickLimits(warnings: [5, 3])
                let enforcer = SessionEnforcer(limits: limits, logger: quietLogger, usesLogind: false)
                defer { enforcer.stop() }
                let source = TestLimitsSource([try childLimits(uid: child.uid, user: child.name, daily: 7, atEnd: .end)])
                let file = directory + "/" + LoginLimitsFile.name
                let store = try Store.open(directory: directory + "/store", logger: quietLogger)
                let audit = AuditRecorder()
                let keeper = TimeKeeper()
                // As the Guard wires it: the session rules monitors share, then the enforcer.
                try keeper.start(.init(sessions: { MonitorSessions.merge(logind: [], pam: records.current().open) },
                                       source: source, enforcer: SessionRules(enforcer: enforcer, limits: limits), store: store, filePath: file, limits: limits,
                                       audit: audit.append, logger: quietLogger))
                defer { keeper.stop() }
                let started = Date()

                // Warned on their terminal, twice, before the end; the session still runs.
                var seen = ""
                #expect(waitFor(seconds: 8) {
                    seen += terminal.read()
                    return seen.components(separatedBy: "left: then your session will end").count == 3
                }, "the terminal showed: \(seen.debugDescription)")
                #expect(seen.contains("5 seconds left") || seen.contains("4 seconds left"), "\(seen.debugDescription)")
                #expect(seen.contains("Time limit set by FamilyControls Demo; a parent or guardian can give you more time"))
                #expect(!ProcessHandle.hasExited(pidfd: pidfds[1].rawValue), "the session ended before the time was up")

                // At the end: the session's processes are gone (no logind here).
                #expect(waitFor(seconds: 10) { pidfds.allSatisfy { ProcessHandle.hasExited(pidfd: $0.rawValue) } },
                        "the session still runs")
                let ended = Date().timeIntervalSince(started)
                #expect(ended >= 6.5, "ended after \(ended) s of a 7 s allowance")
                #expect(audit.outcomes().filter { $0 == "warned" }.count == 2 && audit.outcomes().contains("ended"),
                        "\(audit.rows.get())")

                // The login-limits file says the day's time is used up: the PAM module refuses the next login.
                #expect(waitFor(seconds: 5) {
                    guard let line = limitsLine(of: child.uid, at: file), let used = Int(line[3]) else { return false }
                    return used >= 7 && line[4] == "7" && line[5] == "0"
                }, "\(String(describing: limitsLine(of: child.uid, at: file)))")
                let status = try FileManager.default.attributesOfItem(atPath: file)
                #expect(status[.posixPermissions] as? Int == 0o600 && status[.ownerAccountID] as? Int == 0)
                keeper.stop()
                #expect((try store.timeUsed(on: LocalMoment(.now).day)[child.uid] ?? 0) >= 7)
            }
        }
    }
}

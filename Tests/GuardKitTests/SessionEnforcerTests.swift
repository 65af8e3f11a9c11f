import Foundation
@testable import GuardKit
import SystemKit
import TestSupport
import Testing
@testable import GuardIdentity
@testable import GuardSessions

/// The enforcer without logind, on real process trees: a root leader made
/// the leader of a kernel session of its own by `setsid(1)` (as `login` or
/// `su` opens a session), the child's processes under it as the real
/// throwaway user (`setpriv(1)`), and what must survive beside them.
@Suite(.serialized, .enabled(if: canManageUsers && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"),
                                 "needs root, useradd, setpriv(1) and setsid(1)"))
struct SessionEnforcerTests {
    /// A tree of processes whose lines `NAME PID` were written to a file.
    private struct Tree {
        var pids: [String: pid_t]
        var pidfds: [String: FileDescriptor]

        func hasExited(_ name: String) -> Bool {
            guard let pidfd = pidfds[name] else { return true }
            return ProcessHandle.hasExited(pidfd: pidfd.rawValue)
        }

        func kill() {
            for pidfd in pidfds.values { ProcessHandle.send(SIGKILL, to: pidfd.rawValue) }
        }
    }

    /// Starts `script` under `/bin/sh` through `prefix` (`setsid`,
    /// `setpriv …`), its output into `directory`, and waits for the lines
    /// `NAME PID` of every one of `names`; each process is pinned by a pidfd.
    private func start(_ prefix: [String], _ script: String, names: [String], in directory: String) throws -> Tree {
        let output = "\(directory)/\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: output, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        // The test runner's threads block most signals, and a process
        // started from one inherits the mask: perl empties it first, so the
        // tree gets signals as a login's processes do.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perl")
        process.arguments = ["-MPOSIX", "-e", "sigprocmask(SIG_SETMASK, POSIX::SigSet->new, undef) or die; exec @ARGV or die"]
            + prefix + ["/bin/sh", "-c", script]
        process.standardOutput = handle
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        let deadline = Date() + 10
        while Date() < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            var pids: [String: pid_t] = [:]
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                if words.count == 2, let pid = pid_t(words[1]) { pids[String(words[0])] = pid }
            }
            if names.allSatisfy({ pids[$0] != nil }) {
                var pidfds: [String: FileDescriptor] = [:]
                for (name, pid) in pids { pidfds[name] = ProcessHandle.open(pid: pid) }
                return Tree(pids: pids, pidfds: pidfds)
            }
            usleep(20_000)
        }
        throw FixtureError("the processes did not start: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
    }

    private func asChild(_ child: ThrowawayUser) -> String {
        "/usr/bin/setpriv --reuid=\(child.uid) --regid=\(child.gid) --clear-groups"
    }

    private func session(of child: ThrowawayUser, leader: pid_t, openedAt: UnixTime = .now) -> MonitorSession {
        MonitorSession(name: "pam-\(leader)",
                       session: LoginSession(user: child.name, uid: child.uid, service: "login", tty: nil,
                                             runtimeDirectory: nil, display: nil, waylandDisplay: nil, bus: nil,
                                             sessionID: nil, leader: leader, openedAt: openedAt))
    }

    /// A session led by root's `leader`, with one process of the child's, `plain`.
    private func startSession(of child: ThrowawayUser, in directory: String) throws -> Tree {
        chmod(directory, 0o755)
        return try start(["/usr/bin/setsid"], """
            echo leader $$
            \(asChild(child)) /bin/sh -c 'sleep 1000 & echo plain $!; wait' &
            wait
            """, names: ["leader", "plain"], in: directory)
    }

    private func enforcer(grace: Duration) -> SessionEnforcer {
        var limits = GuardLimits()
        limits.sessionEndGrace = grace
        return SessionEnforcer(limits: limits, logger: Logger(label: "test"), usesLogind: false)
    }

    @Test func endWithoutLogindKillsTheSessionsProcesses() async throws {
        try await withThrowawayUser(prefix: "se") { child in
            try await withTemporaryDirectory { directory in
                chmod(directory, 0o755)
                let user = asChild(child)
                // The leader (root), the child's processes in its kernel
                // session, one that ignores SIGTERM and SIGHUP, one the child
                // moved to a kernel session of its own (still under the
                // leader), and a process of root in the session.
                let tree = try start(["/usr/bin/setsid"], """
                    echo leader $$
                    \(user) /bin/sh -c 'echo plainshell $$; sleep 1000 & echo plain $!; wait' &
                    \(user) /bin/sh -c 'trap "" TERM HUP; echo stubbornshell $$; sleep 1000 & echo stubborn $!; wait' &
                    \(user) /usr/bin/setsid /bin/sh -c 'echo escapedshell $$; sleep 1000 & echo escaped $!; wait' &
                    sleep 1000 & echo root $!
                    wait
                    """, names: ["leader", "plainshell", "plain", "stubbornshell", "stubborn", "escapedshell", "escaped", "root"],
                    in: directory)
                // The same child, outside that session.
                let outside = try start(["/usr/bin/setsid"] + user.split(separator: " ").map(String.init),
                                        "sleep 1000 & echo outside $!; wait", names: ["outside"], in: directory)
                defer {
                    tree.kill()
                    outside.kill()
                }
                let grace = Duration.seconds(2)
                let enforcer = enforcer(grace: grace)
                defer { enforcer.stop() }
                let asked = Date()
                enforcer.enforce(.end, on: [session(of: child, leader: try #require(tree.pids["leader"]))],
                                 reason: "the required monitor of org.example.App was kept down")
                #expect(Date().timeIntervalSince(asked) < 0.1, "enforce waited for the work")

                // Within the grace period: all but the stubborn ones are gone.
                let quick = ["leader", "plainshell", "plain", "escapedshell", "escaped"]
                #expect(pollUntil { quick.allSatisfy(tree.hasExited) }, "\(quick.filter { !tree.hasExited($0) }) still run")
                #expect(Date().timeIntervalSince(asked) < 1.5)
                #expect(!tree.hasExited("stubborn") && !tree.hasExited("stubbornshell"),
                        "a process that ignores SIGTERM died before the grace period ended")

                // After it: killed.
                #expect(pollUntil { tree.hasExited("stubborn") && tree.hasExited("stubbornshell") })
                let ended = Date().timeIntervalSince(asked)
                #expect(ended >= 1.9 && ended < 4.5, "the stubborn processes ended \(ended) s after the call")
                #expect(enforcer.waitUntilIdle(until: .now + .seconds(5)))

                // Root's process in the session, and the child's outside it, still run.
                #expect(!tree.hasExited("root"), "root's process in the session was signalled")
                #expect(!outside.hasExited("outside"), "the child's process outside the session was signalled")
                let outcome = try #require(enforcer.recentOutcomes().last)
                #expect(outcome.result == .ended(signalled: 7, killed: 2, surviving: 0), "\(outcome)")
                #expect(outcome.session == "pam-\(tree.pids["leader"] ?? 0)" && outcome.user == child.name)
                #expect(outcome.description.hasSuffix(": the required monitor of org.example.App was kept down"))
            }
        }
    }

    @Test func lockWithoutLogindEndsTheSessionAndSaysWhy() async throws {
        try await withThrowawayUser(prefix: "se") { child in
            try await withTemporaryDirectory { directory in
                let tree = try startSession(of: child, in: directory)
                defer { tree.kill() }
                let enforcer = enforcer(grace: .seconds(1))
                defer { enforcer.stop() }
                enforcer.enforce(.lock, on: [session(of: child, leader: try #require(tree.pids["leader"]))], reason: "time is up")
                #expect(pollUntil { tree.hasExited("plain") && tree.hasExited("leader") })
                #expect(enforcer.waitUntilIdle(until: .now + .seconds(5)))
                let outcome = try #require(enforcer.recentOutcomes().last)
                #expect(outcome.consequence == .lock)
                #expect(outcome.note == "without logind there is no screen to lock; ended instead", "\(outcome)")
                #expect(outcome.result == .ended(signalled: 3, killed: 0, surviving: 0), "\(outcome)")
            }
        }
    }

    /// A pid recycled since the session opened names another process: the
    /// session is over, and that process is never signalled.
    @Test func aLeaderThatStartedAfterTheSessionOpenedIsNeverSignalled() async throws {
        try await withThrowawayUser(prefix: "se") { child in
            try await withTemporaryDirectory { directory in
                let tree = try startSession(of: child, in: directory)
                defer { tree.kill() }
                let enforcer = enforcer(grace: .seconds(1))
                defer { enforcer.stop() }
                let opened = UnixTime.now.adding(.seconds(-60))
                enforcer.enforce(.end, on: [session(of: child, leader: try #require(tree.pids["leader"]), openedAt: opened)],
                                 reason: "test")
                #expect(enforcer.waitUntilIdle(until: .now + .seconds(5)))
                let outcome = try #require(enforcer.recentOutcomes().last)
                #expect(outcome.result == .alreadyOver("the process that opened the session is gone"), "\(outcome)")
                #expect(!tree.hasExited("leader") && !tree.hasExited("plain"))
            }
        }
    }

    /// A leader that is neither root's nor the session's user's is not one
    /// the Guard signals, nor is anything found through it.
    @Test func aLeaderOfAnotherUserIsRefused() async throws {
        try await withThrowawayUser(prefix: "se") { child in
            try await withTemporaryDirectory { directory in
                chmod(directory, 0o755)
                let tree = try start(["/usr/bin/setsid", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
                                     "echo leader $$; sleep 1000 & echo other $!; wait", names: ["leader", "other"],
                                     in: directory)
                defer { tree.kill() }
                let enforcer = enforcer(grace: .seconds(1))
                defer { enforcer.stop() }
                enforcer.enforce(.end, on: [session(of: child, leader: try #require(tree.pids["leader"]))], reason: "test")
                #expect(enforcer.waitUntilIdle(until: .now + .seconds(5)))
                let outcome = try #require(enforcer.recentOutcomes().last)
                #expect(outcome.result == .failed("the process named as the session's leader is not one the Guard may signal"),
                        "\(outcome)")
                #expect(!tree.hasExited("leader") && !tree.hasExited("other"))
            }
        }
    }
}

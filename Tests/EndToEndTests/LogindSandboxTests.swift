import Foundation
import SystemKit
import TestSupport
import Testing

/// sd-login inside the Guard's sandbox: the unit's capabilities, read-only
/// trees, /proc options and system call filter (inotify for the monitor,
/// the reads of /run/systemd) leave logind's sessions readable. Run as
/// `logind-probe` in a mount namespace whose /run/systemd is a folder
/// holding one session file in logind's format (systemd as PID 1 does not
/// run here, so no live logind writes one).
@Suite(.enabled(if: getuid() == 0 && productExists("logind-probe") && FileManager.default.fileExists(atPath: "/run/systemd")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") && canAnalyzeUnits,
                "needs root, unshare(1), /run/systemd, systemd-analyze and `swift build`'s logind-probe"))
struct LogindSandboxTests {
    @Test func theGuardsUnitSandboxLetsSdLoginOpenItsMonitorAndListSessions() async throws {
        try await withThrowawayUser(prefix: "ls") { child in
            try await withTemporaryDirectory { root in
                for folder in ["system", "seats", "sessions", "users"] {
                    try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
                }
                let session = ["# This is private data. Do not parse.", "UID=\(child.uid)", "USER=\(child.name)", "ACTIVE=1",
                               "IS_DISPLAY=1", "STATE=active", "REMOTE=0", "LEADER_FD_SAVED=no", "TYPE=tty", "CLASS=user",
                               "SCOPE=session-9.scope", "TTY=tty3", "SERVICE=login", "LEADER=4949", "REALTIME=1700000000000000"]
                try Data((session.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: "\(root)/sessions/9"))
                let sandboxed = try GuardSandbox.unit().wrap([productPath("logind-probe"), "list"])
                let probed = try await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c",
                                                                #"mount --bind "$0" /run/systemd && exec "$@""#, root] + sandboxed)
                #expect(probed.status == 0, "\(probed.standardOutput)\(probed.standardError)")
                let lines = probed.standardOutput.split(separator: "\n")
                #expect(lines.first?.hasPrefix("running true") == true, "\(probed.standardOutput)")
                let fields = lines.dropFirst().first?.split(separator: "\t").map(String.init) ?? []
                #expect(Array(fields.prefix(5)) == ["9", child.name, String(child.uid), "login", "tty3"],
                        "\(probed.standardOutput)\(probed.standardError)")
            }
        }
    }
}

/// The session enforcer against a real logind: a Debian booted in a
/// container (``LogindContainer``), a real session of its child opened
/// through PAM and pam_systemd, and `logind-probe enforce` on the host
/// calling logind on the container's system bus, as the Guard calls the
/// machine's.
@Suite(.serialized, .enabled(if: LogindContainer.isAvailable && productExists("logind-probe"),
                             "needs root, systemd-nspawn, nsenter, busctl, debootstrap (or the root it made) and `swift build`'s logind-probe"))
struct LogindSessionEnforcerTests {
    private func enforce(_ consequence: String, _ session: (id: String, path: String, leader: pid_t), grace: Int,
                         in container: LogindContainer) throws -> RunningApp {
        try RunningApp(arguments: ["/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(container.busAddress)", productPath("logind-probe"),
                                   "enforce", consequence, session.id, String(session.leader), LogindContainer.childName,
                                   String(LogindContainer.childUID), String(grace)])
    }

    /// Ends `dbus-monitor` with SIGKILL: it inherits the test runner's
    /// blocked signals, so SIGTERM would wait for ever.
    private func stop(_ monitor: RunningApp) {
        kill(monitor.process.processIdentifier, SIGKILL)
        monitor.stop()
    }

    /// Lines of `dbus-monitor` for the `Lock` signals on the container's bus.
    private func watchLockSignals(on container: LogindContainer) async throws -> RunningApp {
        let monitor = try RunningApp(arguments: ["/usr/bin/dbus-monitor", "--address", container.busAddress,
                                                 "type='signal',interface='org.freedesktop.login1.Session',member='Lock'"])
        // It says NameAcquired once it listens.
        #expect(await eventually { monitor.standardOutput.contains("NameAcquired") }, "\(monitor.standardError)")
        return monitor
    }

    @Test func endThroughLogindTerminatesTheChildsSession() async throws {
        try await LogindContainer.with { container in
            let session = try await container.openSession()
            let leader = try #require(ProcessHandle.open(pid: session.leader))
            let probe = try enforce("end", session, grace: 2000, in: container)
            #expect(await probe.exitStatus() == 0, "\(probe.standardError)")
            #expect(probe.standardOutput.contains("outcome terminated -"), "\(probe.standardOutput)\(probe.standardError)")
            #expect(try await !container.hasSession(session.id), "logind still has session \(session.id)")
            #expect(ProcessHandle.hasExited(pidfd: leader.rawValue), "the session's leader still runs")
        }
    }

    /// logind sends the session's `Lock` signal; with no screen locker to
    /// lock it (the child's session has none, as a text console has none),
    /// the session is ended once the grace period is over.
    @Test func lockThroughLogindSignalsLockAndEndsASessionNoLockerLocked() async throws {
        try await LogindContainer.with { container in
            let session = try await container.openSession()
            let monitor = try await watchLockSignals(on: container)
            defer { stop(monitor) }
            let probe = try enforce("lock", session, grace: 1500, in: container)
            #expect(await probe.exitStatus() == 0, "\(probe.standardError)")
            #expect(await eventually { monitor.standardOutput.contains("path=\(session.path); interface=org.freedesktop.login1.Session; member=Lock") },
                    "\(monitor.standardOutput)")
            #expect(probe.standardOutput.contains("outcome terminated no screen locker locked it within 1.5 seconds; ended instead"),
                    "\(probe.standardOutput)\(probe.standardError)")
            #expect(try await !container.hasSession(session.id))
        }
    }

    /// A locker that locks the session on logind's `Lock` (and says so
    /// with `SetLockedHint`, as screen lockers do) keeps it: locked, not ended.
    @Test func lockThroughLogindStandsWhenTheLockerLocks() async throws {
        try await LogindContainer.with { container in
            let session = try await container.openSession()
            let monitor = try await watchLockSignals(on: container)
            defer { stop(monitor) }
            // The grace is long enough for the test to answer `Lock` on a loaded
            // machine: the probe reads `LockedHint` when it is over.
            let probe = try enforce("lock", session, grace: 10000, in: container)
            #expect(await eventually { monitor.standardOutput.contains("path=\(session.path); interface=org.freedesktop.login1.Session; member=Lock") },
                    "\(monitor.standardOutput)")
            try await container.busctl(["call", "org.freedesktop.login1", session.path, "org.freedesktop.login1.Session",
                                        "SetLockedHint", "b", "true"]).requireSuccess()
            #expect(await probe.exitStatus() == 0, "\(probe.standardError)")
            #expect(probe.standardOutput.contains("outcome locked -"), "\(probe.standardOutput)\(probe.standardError)")
            #expect(try await container.hasSession(session.id), "a locked session was ended")
        }
    }
}


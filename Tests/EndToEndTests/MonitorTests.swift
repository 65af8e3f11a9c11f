import Foundation
import Testing
import TestSupport
import Varlink

/// The monitors the Guard keeps running: a real child session opened
/// through PAM as a login opens one (`runuser -l` with the shipped session
/// module), the real Guard, and the child's own unprivileged processes
/// trying to end, stop, trace or hide the monitor.
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.fileExists(atPath: pamWrapperLibrary),
                             "needs root, the built products and libpam-wrapper"))
struct MonitorTests {
    /// A monitor that says it started, with its pid, then sleeps.
    static let sleeper = """
        #!/bin/sh
        echo "monitor up as pid $$ in session $FAMILYCONTROLS_MONITOR_SESSION for $FAMILYCONTROLS_MONITOR"
        exec sleep 100000

        """

    /// Puts `script` in the demo app's folder as `bin/monitor` and declares
    /// it in the desktop entry, before the app is approved and locked.
    private func declareMonitor(_ guardd: GuardFixture, _ script: String = sleeper, arguments: String = "") throws {
        let bin = "\(guardd.appDirectory)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try writeProgram(script, to: "\(bin)/monitor")
        let entry = "\(guardd.appDirectory)/\(GuardFixture.appID).desktop"
        // In place of the demo's own monitor.
        let text = try String(contentsOfFile: entry, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("X-FamilyControls-Monitor=") }.joined(separator: "\n")
        try (text + "X-FamilyControls-Monitor=bin/monitor\(arguments)\n").write(toFile: entry, atomically: false, encoding: .utf8)
        try TestSupport.sh("chown -R \(guardd.child.name): '\(guardd.appDirectory)'").requireSuccess()
    }

    private func approve(_ guardd: GuardFixture) async throws {
        try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
    }

    /// The app approved, then the child logged in: a session that lasts until its input ends.
    private func approvedAndLoggedIn(_ guardd: GuardFixture) async throws -> RunningApp {
        let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
        try await approve(guardd)
        return try logins.login(guardd.child.name, "read line")
    }

    private func monitors(_ guardd: GuardFixture) async throws -> [JSONObject] {
        try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    /// The running monitor's pid, once there is one other than `other`. The
    /// wait is loose, since the whole suite runs beside it; how soon a monitor
    /// starts is measured by `familycontrols-bench monitor`.
    private func runningPID(_ guardd: GuardFixture, other: Int64? = nil,
                            timeout: Duration = .seconds(30)) async throws -> Int64? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let running = try await monitors(guardd).first(where: { $0["state"]?.stringValue == "running" }),
               let pid = running["pid"]?.intValue, pid != other, pid > 0 { return pid }
            try await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// `familyctl log` as the child's guardian reads it.
    private func guardianLog(_ guardd: GuardFixture) async throws -> String {
        try await run("/usr/bin/setpriv", ["--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--init-groups",
                                           "/usr/bin/env", "FAMILYCONTROLS_SOCKET=\(guardd.socket)", productPath("familyctl"),
                                           "log", "--user", guardd.child.name]).requireSuccess().standardOutput
    }

    /// `command` run by the child, as an unprivileged process of theirs.
    private func asChild(_ guardd: GuardFixture, _ command: String) async throws -> ProcessResult {
        try await run("/usr/bin/setpriv", ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--init-groups",
                                           "/bin/sh", "-c", command])
    }

    private static func status(_ pid: Int64) -> [String: String] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return fields
    }

    private static func isGone(_ pid: Int64) -> Bool {
        let state = status(pid)["State"]
        return state == nil || state!.hasPrefix("Z")
    }

    /// The voluntary context switches of the Guard's `guard-monitors` thread: how often it woke.
    private static func monitorThreadWakeUps(_ guardd: GuardFixture) throws -> Int {
        let pid = try #require(guardd.process?.processIdentifier)
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.hasPrefix("guard-monitors") else { continue }
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") })
            return try #require(Int(line.split(separator: "\t").last ?? ""))
        }
        throw FixtureError("the Guard has no guard-monitors thread")
    }

    /// With a monitor running and nothing happening, the monitors' thread
    /// sleeps (no look every 100 ms); the session's leader killed (so no
    /// PAM session close is told) wakes it through the leader's pidfd, and
    /// the monitor is stopped.
    @Test func theMonitorsThreadSleepsUntilSomethingHappensAndASessionsEndWakesIt() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            _ = try #require(try await runningPID(guardd, timeout: .seconds(60)), "\(guardd.log)")
            try await Task.sleep(for: .milliseconds(500))
            let before = try Self.monitorThreadWakeUps(guardd)
            try await Task.sleep(for: .seconds(5))
            let woke = try Self.monitorThreadWakeUps(guardd) - before
            // A look every 100 ms would be 50, one every 250 ms 20. The approvals
            // read again every 10 s may come once, and each reading can wait on
            // the disk or a lock a few times on a loaded machine (7 seen in 3 s).
            #expect(woke <= 12, "the monitors' thread woke \(woke) times in 5 s with nothing happening")

            // Killed, so no PAM session close tells the Guard: only the leader's exit does.
            kill(session.process.processIdentifier, SIGKILL)
            let ended = ContinuousClock.now
            #expect(await eventually(timeout: .seconds(10)) { guardd.log.contains("its session ended") }, "\(guardd.log.suffix(2000))")
            print("monitor stopped \(ContinuousClock.now - ended) after its session's leader ended")
            // The list is published once the monitors' thread has gone round, just after it logs the stop.
            #expect(try await eventually(timeout: .seconds(10), asking: { try await monitors(guardd).isEmpty }))
        }
    }

    @Test func anApprovedAppsMonitorRunsInTheChildsSessionAsTheChildAndOutOfTheirReach() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd)
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            let session = try logins.login(guardd.child.name, "echo in; read line")
            defer { session.stop() }
            #expect(await eventually { session.standardOutput.contains("in") }, "\(session.standardError)")
            #expect(try await monitors(guardd).isEmpty, "no monitor before the approval")

            let approved = ContinuousClock.now
            try await approve(guardd)
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            let delay = ContinuousClock.now - approved
            print("monitor started \(delay) after the approval")
            // Loose: the whole suite runs beside it; `familycontrols-bench monitor` measures.
            #expect(delay < .seconds(15), "started \(delay) after the approval")
            #expect(await eventually { guardd.log.contains("monitor up as pid \(pid) in session pam-\(session.process.processIdentifier)") },
                    "\(guardd.log)")

            // As the child, with no new privileges, in a session of its own, a child of the Guard.
            let status = Self.status(pid)
            #expect(status["Uid"]?.split(separator: "\t").allSatisfy { $0 == "\(guardd.child.uid)" } == true, "\(status)")
            #expect(status["NoNewPrivs"] == "1", "\(status)")
            #expect(status["PPid"] == "\(guardd.process?.processIdentifier ?? -1)", "\(status)")
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            let afterName = stat.split(separator: ")").last?.split(separator: " ") ?? []
            #expect(afterName.count > 4 && afterName[3] == "\(pid)", "its own session: \(stat)")
            // Not dumpable: /proc/PID is root's, and the child can neither trace it nor read it.
            let trace = try await asChild(guardd, """
                python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True); r=l.ptrace(16,\(pid),0,0); print("attach", r, ctypes.get_errno())'
                cat /proc/\(pid)/environ >/dev/null 2>&1 && echo read-environ || echo no-environ
                head -c 1 /proc/\(pid)/maps >/dev/null 2>&1 && echo read-mem || echo no-mem
                """)
            #expect(trace.standardOutput.contains("attach -1 1"), "\(trace.standardOutput) \(trace.standardError)")
            #expect(trace.standardOutput.contains("no-environ"), "\(trace.standardOutput)")
            #expect(trace.standardOutput.contains("no-mem"), "\(trace.standardOutput)")
            // Its environment is the clean one the Guard gave.
            let environ = try String(contentsOfFile: "/proc/\(pid)/environ", encoding: .utf8).split(separator: "\0").map(String.init)
            #expect(environ.contains("FAMILYCONTROLS_MONITOR=\(GuardFixture.appID)"), "\(environ)")
            #expect(environ.contains("USER=\(guardd.child.name)"), "\(environ)")
            #expect(!environ.contains { $0.hasPrefix("LD_PRELOAD") }, "\(environ)")
            let listed = try #require(try await monitors(guardd).first)
            #expect(listed["user"]?.stringValue == guardd.child.name && listed["appID"]?.stringValue == GuardFixture.appID)

            // Revoke: the monitor stops, for good.
            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID]).requireSuccess()
            #expect(await eventually(timeout: .seconds(15)) { Self.isGone(pid) }, "\(guardd.log)")
            #expect(try await monitors(guardd).isEmpty)
            let log = try await guardianLog(guardd)
            #expect(log.contains("monitor of \(GuardFixture.appID) for \(guardd.child.name) started in session"), "\(log)")
            #expect(log.contains("stopped in session pam-\(session.process.processIdentifier): its approval was lifted"), "\(log)")
        }
    }

    @Test func theChildsKillBringsTheMonitorBackAtOnceAndAStopIsUndoneEachRecorded() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd)
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            try await approve(guardd)
            let session = try logins.login(guardd.child.name, "echo in; read line")
            defer { session.stop() }
            var pid = try #require(try await runningPID(guardd), "a login starts the monitor: \(guardd.log)")
            for round in 1...3 {
                let killed = ContinuousClock.now
                #expect(try await asChild(guardd, "kill -9 \(pid)").status == 0)
                let next = try #require(try await runningPID(guardd, other: pid, timeout: .seconds(10)), "round \(round): \(guardd.log)")
                let delay = ContinuousClock.now - killed
                print("round \(round): monitor back \(delay) after kill -9")
                #expect(delay < .seconds(10), "round \(round): back \(delay) after the kill")
                pid = next
            }
            let log = try await guardianLog(guardd)
            #expect(log.contains("monitor of \(GuardFixture.appID) for \(guardd.child.name) ended by signal 9; restarted"), "\(log)")
            #expect(log.contains("(repeated 3 times"), "three kills, one row counted three times: \(log)")
            #expect(try await monitors(guardd).first?["restarts"]?.intValue == 3)

            #expect(try await asChild(guardd, "kill -STOP \(pid)").status == 0)
            #expect(await eventually(timeout: .seconds(10)) {
                let state = Self.status(pid)["State"] ?? ""
                return state.hasPrefix("S") || state.hasPrefix("R")
            }, "the stop is undone: \(Self.status(pid))")
            #expect(await eventually { guardd.log.contains("was stopped by signal 19; continued") }, "\(guardd.log)")
            #expect(try await guardianLog(guardd).contains("stopped by signal 19; continued"))
            #expect(try await runningPID(guardd) == pid, "continued, not restarted")

            // The child's own desktop settings do not reach it.
            // A home of the child's (the throwaway account has none), where a desktop would read them.
            let home = "\(guardd.directory)/child-home"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            try await sh("chown \(guardd.child.name) '\(home)'").requireSuccess()
            try await asChild(guardd, """
                HOME=\(home); export HOME
                mkdir -p ~/.config/autostart ~/.config/systemd/user
                printf '[Desktop Entry]\\nType=Application\\nName=x\\nExec=true\\nHidden=true\\n' > ~/.config/autostart/\(GuardFixture.appID).desktop
                ln -sf /dev/null ~/.config/systemd/user/\(GuardFixture.appID).service
                """).requireSuccess()
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await runningPID(guardd) == pid)

            // The session ends: the monitor stops with it.
            session.write("done\n")
            #expect(await session.exitStatus() == 0)
            #expect(await eventually(timeout: .seconds(15)) { Self.isGone(pid) }, "\(guardd.log)")
            var left = try await monitors(guardd)
            for _ in 0..<50 where !left.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
                left = try await monitors(guardd)
            }
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test func aMonitorThatExitsAtOnceIsStartedAgainWithBackOffAndAtMostNTimesAMinute() async throws {
        try await withGuard(extraConfiguration: "\n[Monitors]\nRestartsPerMinute=5\n") { guardd in
            let record = "\(guardd.directory)/starts"
            #expect(FileManager.default.createFile(atPath: record, contents: nil))
            try await sh("chown \(guardd.child.name) '\(record)'").requireSuccess()
            try declareMonitor(guardd, "#!/bin/sh\ndate +%s.%N >> \"$1\"\nexit 3\n", arguments: " \(record)")
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            try await Task.sleep(for: .seconds(8))
            let starts = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").compactMap { Double($0) }
            #expect(starts.count >= 4, "started again at once at first: \(starts)")
            #expect(starts.count <= 5, "never more than 5 a minute: \(starts)")
            let gaps = zip(starts.dropFirst(), starts).map { $0 - $1 }
            #expect(gaps.count >= 3 && gaps.last! > gaps.first!, "waits longer as it keeps ending: \(gaps)")
            let listed = try #require(try await monitors(guardd).first)
            #expect(listed["state"]?.stringValue == "waiting", "\(listed)")
            #expect(listed["ended"]?.stringValue == "exit status 3", "\(listed)")
            #expect(listed["restartAt"].map { $0 != .null } == true, "\(listed)")
            let log = try await guardianLog(guardd)
            #expect(log.contains("ended by exit status 3; starts again in"), "\(log)")
        }
    }

    @Test func aGuardThatCrashedEndsTheMonitorsItLeftAndRunsThemAgainInTheSessionsStillOpen() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            // Its line read first: a line written after the Guard is gone would end it by SIGPIPE.
            #expect(await eventually { guardd.log.contains("monitor up as pid \(pid)") }, "\(guardd.log)")
            guardd.stop(signal: SIGKILL)
            try await Task.sleep(for: .milliseconds(200))
            #expect(!Self.isGone(pid), "the monitor outlives a crashed Guard")
            try await guardd.start()
            let next = try #require(try await runningPID(guardd, other: pid), "\(guardd.log)")
            #expect(next != pid)
            #expect(await eventually { Self.isGone(pid) }, "the one left behind is ended")
            #expect(guardd.log.contains("session(s) still open since the Guard last ran"), "\(guardd.log)")
            // A Guard that stops cleanly stops its monitors.
            guardd.stop()
            #expect(await eventually { Self.isGone(next) }, "\(guardd.log)")
        }
    }

    @Test func theGuardsThreadsAndMemoryStayFlatOverAThousandRestarts() async throws {
        try await withGuard(extraConfiguration: "\n[Monitors]\nRestartsPerMinute=600\n") { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let guardPID = try #require(guardd.process?.processIdentifier)
            func measure() -> (threads: Int, kilobytes: Int, descriptors: Int) {
                let status = Self.status(Int64(guardPID))
                let threads = Int(status["Threads"] ?? "") ?? -1
                let rss = Int(status["VmRSS"]?.split(separator: " ").first ?? "") ?? -1
                let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(guardPID)/fd").count) ?? -1
                return (threads, rss, fds)
            }
            var pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            var before = measure()
            for round in 1...1000 {
                kill(pid_t(pid), SIGKILL)
                pid = try #require(try await runningPID(guardd, other: pid, timeout: .seconds(10)), "round \(round): \(guardd.log.suffix(2000))")
                if round == 100 { before = measure() }
            }
            let after = measure()
            print("after 100 restarts: \(before); after 1000: \(after)")
            // The Guard's work pool may start one more thread on demand (it is bounded);
            // a thread per restart would be hundreds.
            #expect(after.threads <= before.threads + 1, "\(before) → \(after)")
            #expect(after.descriptors <= before.descriptors + 2, "\(before) → \(after)")
            #expect(after.kilobytes - before.kilobytes < 4096, "\(before) → \(after)")
            #expect(try await monitors(guardd).first?["restarts"]?.intValue == 1000)
        }
    }

    /// A session logind records: its state files in a private mount
    /// namespace over /run/systemd (nothing outside it sees them), read by the
    /// real libsystemd in the real Guard.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/run/systemd") && FileManager.default.fileExists(atPath: "/run/user"),
                   "needs /run/systemd and /run/user to mount over"))
    func inALogindSessionTheMonitorRunsUntilLogindSaysItIsClosing() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd)
            let state = "\(guardd.directory)/logind"
            for folder in ["sd/system", "sd/seats", "sd/sessions", "sd/users", "user"] {
                try FileManager.default.createDirectory(atPath: "\(state)/\(folder)", withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o755])
            }
            let leader = try RunningApp(arguments: ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)",
                                                    "--clear-groups", "/bin/sleep", "600"])
            defer {
                kill(leader.process.processIdentifier, SIGKILL)
                leader.stop()
            }
            func writeSession(_ sessionState: String) throws {
                let text = ["UID=\(guardd.child.uid)", "USER=\(guardd.child.name)", "ACTIVE=1", "STATE=\(sessionState)",
                            "REMOTE=0", "TYPE=tty", "CLASS=user", "SCOPE=session-c5.scope", "SERVICE=login", "TTY=tty3",
                            "LEADER=\(leader.process.processIdentifier)", "REALTIME=1700000000000000"].joined(separator: "\n") + "\n"
                let temporary = "\(state)/sd/sessions/.#c5"
                try text.write(toFile: temporary, atomically: false, encoding: .utf8)
                #expect(rename(temporary, "\(state)/sd/sessions/c5") == 0)
            }
            guardd.stop()
            guardd.launchPrefix = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                                   "mount --bind \"$0/sd\" /run/systemd && mount --bind \"$0/user\" /run/user && exec \"$@\"", state]
            try await guardd.start()
            #expect(await eventually { guardd.log.contains("session: reading systemd-logind's sessions") }, "\(guardd.log)")
            try await approve(guardd)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await monitors(guardd).isEmpty, "no session yet")

            try writeSession("active")
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            #expect(try await monitors(guardd).first?["session"]?.stringValue == "c5")
            #expect(await eventually { guardd.log.contains("monitor up as pid \(pid) in session c5") }, "\(guardd.log)")

            try writeSession("closing")
            #expect(await eventually(timeout: .seconds(15)) { Self.isGone(pid) }, "\(guardd.log)")
            #expect(try await guardianLog(guardd).contains("stopped in session c5: its session ended"))
        }
    }

    /// The demo as shipped: its own program is its monitor, and the library
    /// tells it so, confirmed by the Guard.
    @Test func theDemosMonitorKnowsItIsTheMonitorAndBeatsWhileAnythingElseIsToldItIsNot() async throws {
        try await withGuard { guardd in
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let name = "pam-\(session.process.processIdentifier)"
            let beat = "monitor \(GuardFixture.appID) for \(guardd.child.name): heartbeat 2: \(GuardFixture.appID) for "
                + "\(guardd.child.name) in session \(name), authorization approved"
            #expect(await eventually { guardd.log.contains(beat) }, "\(guardd.log.suffix(3000))")
            let monitor = try #require(try await monitors(guardd).first)
            #expect(monitor["session"]?.stringValue == name)

            // The same program run by the child, with the Guard's variables copied: not the monitor.
            let forged = try await guardd.app(["monitor"], environment: ["FAMILYCONTROLS_MONITOR": GuardFixture.appID,
                                                                        "FAMILYCONTROLS_MONITOR_SESSION": name])
            #expect(forged.status == 2, "\(forged.standardOutput) \(forged.standardError)")
            #expect(forged.standardError.contains("not"), "\(forged.standardError)")
            // And the Guard says so to any process but the monitor.
            let asked = try await guardd.call("IdentifyMonitor")
            #expect(asked["monitor"] == nil || asked["monitor"] == .null, "\(asked)")

            session.write("done\n")
            #expect(await session.exitStatus() == 0)
        }
    }

    /// A monitor that keeps ending alerts the child's guardian on their desktop agent.
    @Test func aMonitorThatKeepsEndingAlertsTheGuardiansAgent() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, "#!/bin/sh\nexit 4\n")
            let desktop = try DesktopSession(as: guardd.guardian, socket: guardd.socket, withServer: false)
            defer { desktop.stop() }
            // The agent follows the Guard once it has said what waits.
            #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("No requests are waiting") })
            try await Task.sleep(for: .milliseconds(500))
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            #expect(await eventually(timeout: .seconds(15)) { ((try? desktop.terminal()) ?? "").contains("monitor alert: ") },
                    "\((try? desktop.terminal()) ?? "")\n\(guardd.log.suffix(2000))")
            let shown = try desktop.terminal()
            #expect(shown.contains("” for \(guardd.child.name) keeps stopping: "), "\(shown)")
            #expect(shown.contains("the last time it quit"), "\(shown)")
        }
    }

    /// In the shipped unit's sandbox (its capabilities, read from the unit)
    /// the monitor runs and a stop is undone; each capability the monitors
    /// need, dropped, breaks what the unit's comment says it breaks.
    @Test func inTheUnitsSandboxTheMonitorRunsAndIsContinued() async throws {
        try await withGuard(sandbox: try .unit()) { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            #expect(Self.status(pid)["Uid"]?.hasPrefix("\(guardd.child.uid)") == true)
            #expect(try await asChild(guardd, "kill -STOP \(pid)").status == 0)
            #expect(await eventually { guardd.log.contains("was stopped by signal 19; continued") }, "\(guardd.log)")
        }
    }

    @Test func withoutCapSetuidNoMonitorRunsAndTheLogSaysWhy() async throws {
        try await withGuard(sandbox: try .unit(without: "CAP_SETUID")) { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            // Without it neither the monitor nor the inspector that reads its
            // desktop entry can become another user: the log says which step failed.
            #expect(await eventually { guardd.log.contains("could not start: setresuid") || guardd.log.contains("could not start: setgroups") },
                    "\(guardd.log)")
            #expect(try await runningPID(guardd, timeout: .seconds(1)) == nil)
        }
    }

    @Test func withoutCapKillAStoppedMonitorOfTheChildCannotBeContinued() async throws {
        try await withGuard(sandbox: try .unit(without: "CAP_KILL")) { guardd in
            try declareMonitor(guardd)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            #expect(try await asChild(guardd, "kill -STOP \(pid)").status == 0)
            #expect(await eventually { guardd.log.contains("cannot be continued") }, "\(guardd.log)")
            #expect(Self.status(pid)["State"]?.hasPrefix("T") == true)
            kill(pid_t(pid), SIGKILL)
        }
    }
}

import Foundation
import Testing
import TestSupport
import Varlink

/// A monitor the child keeps down gains the child nothing: the real Guard,
/// a real child session opened through PAM by `runuser -l` with the shipped
/// session module (no logind here, so the Guard ends a session by ending its
/// processes), and the child's own unprivileged processes killing, stopping
/// or replacing the monitor.
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.fileExists(atPath: pamWrapperLibrary),
                             "needs root, the built products and libpam-wrapper"))
struct RequiredMonitorTests {
    /// A monitor that says it started, then sleeps (as `sleep`, which the child's loops look for).
    static let sleeper = """
        #!/bin/sh
        echo "monitor up as pid $$"
        exec sleep 100000

        """

    /// Puts `script` in the demo app's folder as `bin/monitor` and declares
    /// it, required as `required` says, before the app is approved and locked.
    private func declareMonitor(_ guardd: GuardFixture, required: String?, _ script: String = sleeper) throws {
        let bin = "\(guardd.appDirectory)/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try writeProgram(script, to: "\(bin)/monitor")
        let entry = "\(guardd.appDirectory)/\(GuardFixture.appID).desktop"
        let text = try String(contentsOfFile: entry, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("X-FamilyControls-Monitor=") }.joined(separator: "\n")
        try (text + "X-FamilyControls-Monitor=bin/monitor\n" + (required.map { "X-FamilyControls-MonitorRequired=\($0)\n" } ?? ""))
            .write(toFile: entry, atomically: false, encoding: .utf8)
        try TestSupport.sh("chown -R \(guardd.child.name): '\(guardd.appDirectory)'").requireSuccess()
    }

    /// The app approved, then the child logged in: a session that lasts until its input ends.
    private func approvedAndLoggedIn(_ guardd: GuardFixture) async throws -> RunningApp {
        let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
        try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
        let session = try logins.login(guardd.child.name, "echo in; read line")
        #expect(await eventually { session.standardOutput.contains("in") }, "\(session.standardError)")
        return session
    }

    private func monitors(_ guardd: GuardFixture) async throws -> [JSONObject] {
        try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    /// The running monitor's pid, once there is one other than `other`. The
    /// wait is loose, since the whole suite runs beside it; how soon a monitor
    /// starts is measured by `familycontrols-bench monitor`.
    private func runningPID(_ guardd: GuardFixture, other: Int64? = nil, timeout: Duration = .seconds(30)) async throws -> Int64? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let running = try await monitors(guardd).first(where: { $0["state"]?.stringValue == "running" }),
               let pid = running["pid"]?.intValue, pid != other, pid > 0 { return pid }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    /// `familyctl log` as the child's guardian reads it.
    private func guardianLog(_ guardd: GuardFixture) async throws -> String {
        try await run("/usr/bin/setpriv", ["--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--init-groups",
                                           "/usr/bin/env", "FAMILYCONTROLS_SOCKET=\(guardd.socket)", productPath("familyctl"),
                                           "log", "--user", guardd.child.name]).requireSuccess().standardOutput
    }

    /// A loop the child runs for `seconds`, sending `signal` to every
    /// `sleep 100000` of theirs (the monitor) as fast as it can.
    private func childLoop(_ guardd: GuardFixture, signal: String, seconds: Int) throws -> RunningApp {
        try RunningApp(arguments: ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                   "/usr/bin/timeout", "-s", "KILL", "\(seconds)", "/bin/sh", "-c",
                                   "while :; do pkill -\(signal) -u \(guardd.child.uid) -x sleep; done"])
    }

    /// How long the session took to end after `started`, or nil if it did not within `timeout`.
    private func sessionEnds(_ session: RunningApp, after started: ContinuousClock.Instant,
                             timeout: Duration = .seconds(20)) async -> Duration? {
        guard await eventually(timeout: timeout, { !session.process.isRunning }) else { return nil }
        return (session.endedAt ?? ContinuousClock.now) - started
    }

    @Test func aKillLoopOnARequiredMonitorEndsTheChildsSessionWithinSeconds() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: "end")
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            _ = try #require(try await runningPID(guardd), "\(guardd.log)")
            let started = ContinuousClock.now
            let loop = try childLoop(guardd, signal: "KILL", seconds: 12)
            defer { loop.stop() }
            let took = await sessionEnds(session, after: started)
            print("kill loop → session ended after \(took.map { "\($0)" } ?? "never")")
            // The Guard acts within about a second; the session's processes then have the enforcer's grace (5 s).
            #expect(took.map { $0 < .seconds(10) } == true, "\(guardd.log.suffix(3000))")
            #expect(guardd.log.contains("sessions pam-\(session.process.processIdentifier) are ended: the required monitor of "
                                        + "\(GuardFixture.appID) was kept down"), "\(guardd.log.suffix(3000))")
            let log = try await guardianLog(guardd)
            #expect(log.contains("kept down in session pam-\(session.process.processIdentifier)"), "\(log)")
        }
    }

    /// A required monitor that cannot start (its program names an
    /// interpreter that is not there) is kept from running too.
    @Test func aRequiredMonitorThatCannotStartEndsTheChildsSessionToo() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: "end", "#!/nonexistent/interpreter\necho never\n")
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let took = await sessionEnds(session, after: ContinuousClock.now, timeout: .seconds(40))
            #expect(took != nil, "\(guardd.log.suffix(3000))")
            #expect(guardd.log.contains("could not start"), "\(guardd.log.suffix(3000))")
            #expect(guardd.log.contains("sessions pam-\(session.process.processIdentifier) are ended: the required monitor of "
                                        + "\(GuardFixture.appID) was kept down"), "\(guardd.log.suffix(3000))")
        }
    }

    @Test func signalsOtherThanKillOnARequiredMonitorEndTheSessionToo() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: "end")
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            _ = try #require(try await runningPID(guardd), "\(guardd.log)")
            let started = ContinuousClock.now
            // A "crash" the child sends: SIGSEGV, as the loop's only signal.
            let loop = try childLoop(guardd, signal: "SEGV", seconds: 12)
            defer { loop.stop() }
            let took = await sessionEnds(session, after: started)
            #expect(took.map { $0 < .seconds(10) } == true, "\(guardd.log.suffix(3000))")
        }
    }

    @Test func aMonitorKilledBySignalsOtherThanKillComesBackAtOnceEveryTime() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: nil)
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            var pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            for (round, signal) in (["SEGV", "BUS", "ABRT", "37"] + Array(repeating: "SEGV", count: 8)).enumerated() {
                let sent = ContinuousClock.now
                #expect(try await guardd.shell("kill -\(signal) \(pid)").status == 0)
                // At once, not after a back-off (ordinary endings of this many rounds would wait up to 30 s);
                // 20 s leaves room for a loaded machine (10.8 s seen under the whole suite).
                let next = try #require(try await runningPID(guardd, other: pid, timeout: .seconds(20)),
                                        "round \(round) (\(signal)): not back within 20 s\n\(guardd.log.suffix(2000))")
                #expect(ContinuousClock.now - sent < .seconds(20))
                pid = next
            }
        }
    }

    @Test func aStopStormOnARequiredMonitorLocksTheSessionWhichWithoutLogindEndsIt() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: "lock")
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            // One stop is seen at once (the Guard is the parent: SIGCHLD), not at a tick.
            #expect(try await guardd.shell("kill -STOP \(pid)").status == 0)
            #expect(await eventually(timeout: .seconds(10)) { guardd.log.contains("was stopped by signal 19; continued") }, "\(guardd.log)")
            let started = ContinuousClock.now
            let loop = try childLoop(guardd, signal: "STOP", seconds: 12)
            defer { loop.stop() }
            let took = await sessionEnds(session, after: started)
            print("stop storm → session ended after \(took.map { "\($0)" } ?? "never")")
            #expect(took.map { $0 < .seconds(10) } == true, "\(guardd.log.suffix(3000))")
            #expect(guardd.log.contains("are locked: the required monitor of \(GuardFixture.appID) was kept down"),
                    "\(guardd.log.suffix(3000))")
        }
    }

    @Test func aDecoyAtTheApprovedPathIsNeverRunTheApprovedFolderIs() async throws {
        try await withGuard { guardd in
            let appID = "org.example.Home"
            let app = try guardd.installDemo(for: guardd.child, appID: appID, inHome: true)
            try await guardd.requestApproved(executable: app + "/familycontrols-demo").requireSuccess()
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            let session = try logins.login(guardd.child.name, "echo in; read line")
            defer { session.stop() }
            let beat = "monitor \(appID) for \(guardd.child.name): heartbeat 2:"
            #expect(await eventually(timeout: .seconds(15)) { guardd.log.contains(beat) }, "\(guardd.log.suffix(3000))")
            let pid = try #require(try await runningPID(guardd), "\(guardd.log)")

            // The folder above the app renamed, a decoy with a monitor of its own at the old path.
            let home = "\(guardd.homesRoot)/\(guardd.child.name)"
            try await guardd.shell("""
                set -e
                mv '\(home)/Applications' '\(home)/Moved'
                mkdir -p '\(app)'
                cp '\(home)/Moved/\(appID)/\(appID).desktop' '\(app)/'
                printf '#!/bin/sh\\necho decoy monitor running\\nexec sleep 100000\\n' > '\(app)/familycontrols-demo'
                chmod 755 '\(app)/familycontrols-demo'
                kill -9 \(pid)
                """).requireSuccess()
            let next = try #require(try await runningPID(guardd, other: pid, timeout: .seconds(10)), "\(guardd.log)")
            // Past the Guard's next reading of the approvals (10 s).
            try await Task.sleep(for: .seconds(12))
            #expect(!guardd.log.contains("decoy monitor running"), "\(guardd.log.suffix(3000))")
            let running = try #require(try await runningPID(guardd), "\(guardd.log)")
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(running)/exe")) ?? ""
            #expect(exe == "\(home)/Moved/\(appID)/familycontrols-demo", "runs \(exe) (pid \(next), \(running))")
            // And the approved program, started again, is told it is the monitor.
            #expect(guardd.log.components(separatedBy: "monitor \(appID) for \(guardd.child.name): heartbeat 2:").count >= 3,
                    "\(guardd.log.suffix(3000))")
        }
    }

    /// The child's own `su` to themself: the real libpam and the shipped
    /// module in a process with su's credentials (the child's real uid, root's
    /// effective one), opening `count` sessions.
    private func childsOwnSessions(_ guardd: GuardFixture, services: String, count: Int) throws -> RunningApp {
        let script = """
            import ctypes, os, sys
            uid, user, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
            os.setresuid(uid, 0, 0)
            CONV = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
            class Conv(ctypes.Structure):
                _fields_ = [("conv", CONV), ("appdata", ctypes.c_void_p)]
            conv = Conv(CONV(lambda n, m, r, a: 19), None)
            lib = ctypes.CDLL(None)
            handles = []
            for i in range(count):
                h = ctypes.c_void_p()
                if lib.pam_start(b"runuser-l", user.encode(), ctypes.byref(conv), ctypes.byref(h)) != 0: sys.exit("pam_start")
                if lib.pam_open_session(h, 0) != 0: sys.exit("pam_open_session")
                handles.append(h)
            print("open", len(handles), flush=True)
            sys.stdin.readline()
            """
        return try RunningApp(arguments: ["/usr/bin/env", "LD_PRELOAD=\(pamWrapperLibrary)", "PAM_WRAPPER=1",
                                          "PAM_WRAPPER_SERVICE_DIR=\(services)", "/usr/bin/python3", "-c", script,
                                          "\(guardd.child.uid)", guardd.child.name, "\(count)"])
    }

    @Test func sessionsTheChildOpensFromItsOwnNeverKeepItsLoginFromBeingRecorded() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: nil)
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let own = try childsOwnSessions(guardd, services: logins.services, count: 70)
            defer { own.stop() }
            #expect(await eventually(timeout: .seconds(30)) { own.standardOutput.contains("open 70") }, "\(own.standardError)")
            let login = try logins.login(guardd.child.name, "echo in; read line")
            defer { login.stop() }
            #expect(await eventually { login.standardOutput.contains("in") }, "\(login.standardError)")
            let name = "pam-\(login.process.processIdentifier)"
            #expect(await eventually {
                guardd.log.contains("session: \(guardd.child.name) opened (service runuser-l, tty none, leader pid \(login.process.processIdentifier))")
            }, "\(guardd.log.suffix(3000))")
            var found = false
            for _ in 0..<100 where !found {
                found = try await monitors(guardd).contains { $0["session"]?.stringValue == name && $0["state"]?.stringValue == "running" }
                if !found { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(found, "the login's monitor runs\n\(guardd.log.suffix(3000))")
            let sessions = try await guardd.call("ListSessions")["sessions"]?.arrayValue ?? []
            #expect(sessions.count <= 17, "at most 16 of the child's own, and the login: \(sessions.count)")
        }
    }

    /// A monitor that asks the Guard who it is at its first instruction (a
    /// small C program: no interpreter to start first) is told, at every
    /// start: it is recorded before it runs.
    @Test func aMonitorAskingAtItsFirstInstructionIsToldItIsTheMonitorEveryTime() async throws {
        try await withGuard { guardd in
            try declareMonitor(guardd, required: nil, "#!/bin/sh\n")
            let source = "\(guardd.directory)/ask.c"
            try #"""
                #include <stdio.h>
                #include <stdlib.h>
                #include <string.h>
                #include <unistd.h>
                #include <sys/socket.h>
                #include <sys/un.h>
                int main(void) {
                    struct sockaddr_un address = { .sun_family = AF_UNIX };
                    strncpy(address.sun_path, getenv("FAMILYCONTROLS_SOCKET"), sizeof address.sun_path - 1);
                    int s = socket(AF_UNIX, SOCK_STREAM, 0);
                    if (connect(s, (struct sockaddr *)&address, sizeof address) != 0) return 3;
                    const char call[] = "{\"method\":\"org.familycontrols.guard.IdentifyMonitor\"}";
                    write(s, call, sizeof call);
                    char reply[65536];
                    ssize_t got = read(s, reply, sizeof reply - 1);
                    reply[got > 0 ? got : 0] = 0;
                    printf("%s\n", strstr(reply, "\"appID\"") ? "identified" : "not identified");
                    fflush(stdout);
                    for (;;) pause();
                }
                """#.write(toFile: source, atomically: true, encoding: .utf8)
            try await sh("cc -O2 -o '\(guardd.appDirectory)/bin/monitor' '\(source)' && chown \(guardd.child.name) '\(guardd.appDirectory)/bin/monitor'")
                .requireSuccess()
            let session = try await approvedAndLoggedIn(guardd)
            defer { session.stop() }
            let prefix = "monitor \(GuardFixture.appID) for \(guardd.child.name): "
            func answers() -> Int { guardd.log.components(separatedBy: prefix).count - 1 }
            var pid = try #require(try await runningPID(guardd), "\(guardd.log)")
            // 15 restarts: 16 lines, within the 20 a monitor may log at once.
            for round in 1...15 {
                #expect(await eventually { answers() >= round }, "round \(round): \(guardd.log.suffix(2000))")
                kill(pid_t(pid), SIGKILL)
                pid = try #require(try await runningPID(guardd, other: pid, timeout: .seconds(10)), "round \(round)")
            }
            #expect(await eventually { guardd.log.components(separatedBy: prefix + "identified").count - 1 >= 16 },
                    "\(guardd.log.suffix(3000))")
            #expect(!guardd.log.contains(prefix + "not identified"), "\(guardd.log.suffix(3000))")
        }
    }

    /// The demo as shipped, in short `runuser -c` sessions: told it is the
    /// monitor every time, and no guardian is alerted for sessions of seconds.
    @Test func theDemosMonitorIsKnownFromItsStartEvenInShortSessionsWhichRaiseNoAlert() async throws {
        try await withGuard { guardd in
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            // Root's watch of every alert, as a guardian's agent keeps one.
            let watch = try RunningApp(arguments: ["/usr/bin/python3", "-c", """
                import json, signal, socket, sys
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                s.sendall(json.dumps({"method": "org.familycontrols.guard.WatchMonitorAlerts", "more": True}).encode() + b"\\0")
                buf = b""
                while True:
                    data = s.recv(65536)
                    if not data: break
                    buf += data
                    while b"\\0" in buf:
                        line, buf = buf.split(b"\\0", 1)
                        print(line.decode(), flush=True)
                """, guardd.socket])
            defer {
                kill(watch.process.processIdentifier, SIGKILL)
                watch.stop()
            }
            #expect(await eventually { watch.standardOutput.contains("continues") }, "the watch has begun: \(watch.standardError)")
            for round in 1...6 {
                let session = try logins.login(guardd.child.name, "sleep 2")
                #expect(await session.exitStatus() == 0, "round \(round): \(session.standardError)")
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(!guardd.log.contains("not running as this app's monitor"), "\(guardd.log.suffix(3000))")
            #expect(!guardd.log.contains("exit status 2"), "\(guardd.log.suffix(3000))")
            #expect(guardd.log.components(separatedBy: "heartbeat 1:").count - 1 >= 6, "\(guardd.log.suffix(3000))")
            #expect(!watch.standardOutput.contains(GuardFixture.appID), "no alert: \(watch.standardOutput)")
        }
    }
}

// How fast a killed monitor is back: a real Guard runs a monitor as a
// throwaway child user in a session the benchmark opens (as the PAM session
// module would), the monitor is killed with SIGKILL, and the time to the new
// monitor's first line is measured. The baseline, in the same run: the same
// monitor program started directly as the same user, through the same
// spawn, to its first line.
//
// Then a required monitor (X-FamilyControls-MonitorRequired=end) in a session
// of its own: the time from the start of the user's kill loop to the end of
// the session's leader, against a baseline in the same run: the same kind of
// leader ended directly with SIGTERM.
import FamilyControlsModel
import Foundation
import GuardProtocol
import SystemKit
import Varlink
import VarlinkClientKit

/// `familycontrols-bench monitor [--runs N]`: needs root (the Guard does, and a user is made).
func runMonitorBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench monitor: must be run as root (it starts a Guard and makes a user)\n")
        return 77
    }
    let runs = runs(in: arguments, fallback: 100)
    do {
        try MonitorBenchmark(runs: runs).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench monitor: \(error)\n")
        return 1
    }
}

private struct MonitorBenchmark {
    static let appID = "org.familycontrols.BenchMonitor"
    static let requiredAppID = "org.familycontrols.BenchRequired"
    let runs: Int

    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() throws {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let guardBinary = own.appendingPathComponent("familycontrolsd").path
        let familyctl = own.appendingPathComponent("familyctl").path
        let fm = FileManager.default
        guard fm.isExecutableFile(atPath: guardBinary), fm.isExecutableFile(atPath: familyctl) else {
            throw Failure(description: "no familycontrolsd and familyctl beside \(own.path); build them first (swift build -c release)")
        }
        let directory = "/tmp/fcbench-monitor-\(getpid())"
        try? fm.removeItem(atPath: directory)
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o755)
        defer {
            // The Guard's locks outlive it, as they should: unlock the apps before removing them.
            _ = try? shell("/usr/bin/chattr", ["-R", "-f", "-i", directory])
            try? fm.removeItem(atPath: directory)
        }
        let user = "fcbm\(getpid() % 100_000)"
        try shell("/usr/sbin/useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user])
        defer { _ = try? shell("/usr/sbin/userdel", ["-f", user]) }
        guard let account = try UserDatabase.user(named: user) else { throw Failure(description: "useradd made no \(user)") }

        // The monitor: its first line down a FIFO the benchmark holds open, then it waits.
        let fifo = "\(directory)/lines"
        guard mkfifo(fifo, 0o600) == 0, chown(fifo, account.uid, account.gid) == 0 else {
            throw Failure(description: "cannot make \(fifo): \(Errno.current("mkfifo"))")
        }
        let app = try makeApp(Self.appID, name: "Bench Monitor", in: "\(directory)/apps/\(user)", from: own,
                              monitor: "#!/bin/sh\necho \"up $$\" > \"$1\"\nexec sleep 100000\n", arguments: " \(fifo)")
        // A second app whose monitor is required: kept down, the sessions end.
        _ = try makeApp(Self.requiredAppID, name: "Bench Required", in: "\(directory)/apps/\(user)", from: own,
                        monitor: "#!/bin/sh\nexec sleep 100000\n", extraKeys: "X-FamilyControls-MonitorRequired=end\n")
        try shell("/bin/chown", ["-R", "\(user):", "\(directory)/apps/\(user)"])
        try "[Family]\nGuardians=root\nChildren=\(user)\n[Apps]\nRoots=\(directory)/apps/%u\n[Monitors]\nRestartsPerMinute=600\n"
            .write(toFile: "\(directory)/guard.conf", atomically: true, encoding: .utf8)

        let lines = try FileDescriptor.open(fifo, O_RDWR)
        let baseline = try directStarts(account: account, program: "\(app)/bin/monitor", fifo: fifo, lines: lines)

        let socket = "\(directory)/guard.socket"
        let guardProcess = Process()
        guardProcess.executableURL = URL(fileURLWithPath: guardBinary)
        guardProcess.arguments = ["--socket", socket, "--state-dir", "\(directory)/state", "--config", "\(directory)/guard.conf"]
        guardProcess.standardError = FileHandle.nullDevice
        try guardProcess.run()
        defer {
            guardProcess.terminate()
            // A Guard still ending sessions may take its grace period; never wait without end.
            let stop = Date().addingTimeInterval(10)
            while guardProcess.isRunning && Date() < stop { Thread.sleep(forTimeInterval: 0.05) }
            if guardProcess.isRunning { kill(guardProcess.processIdentifier, SIGKILL) }
            guardProcess.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        while !fm.fileExists(atPath: socket) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let client = try VarlinkClient(path: socket, connectTimeout: .seconds(5), replyTimeout: .seconds(30))
        // A session of the user whose leader is this process, as the PAM module opens one.
        let digits = Array("0123456789abcdef")
        let token = String((0..<32).map { _ in digits[Int.random(in: 0..<digits.count)] })
        _ = try client.call(Guard.OpenSession.method,
                            parameters: Guard.OpenSession.Parameters(token: token, user: user, service: "bench").object)
        try approve(Self.appID, user: user, familyctl: familyctl, socket: socket)
        var pid = try firstLine(lines, timeout: 10)

        var restarts: [Double] = []
        for _ in 0..<runs {
            let killed = monotonicSeconds()
            kill(pid, SIGKILL)
            pid = try firstLine(lines, timeout: 10)
            restarts.append(monotonicSeconds() - killed)
        }
        let guardFigure = median(restarts), baselineFigure = median(baseline)
        print("monitor restart: SIGKILL to the new monitor's first line, median of \(runs): \(formatted(guardFigure * 1000, digits: 2)) ms "
            + "(target ≤ 100 ms)")
        print("baseline: the same monitor started directly as the same user to its first line, median of \(baseline.count): "
            + "\(formatted(baselineFigure * 1000, digits: 2)) ms")
        print("ratio: \(formatted(guardFigure / baselineFigure, digits: 2))× the baseline")
        fflush(nil)

        // The kill loop: this process's own session closed first (ending the
        // user's sessions would end it), then a session led by a process of its own.
        _ = try client.call(Guard.CloseSession.method, parameters: Guard.CloseSession.Parameters(token: token).object)
        let endBaseline = try (0..<5).map { _ in try directEnd(socket: socket) }
        try approve(Self.requiredAppID, user: user, familyctl: familyctl, socket: socket)
        let leader = try sessionLeader(socket: socket, user: user, open: true)
        defer { if leader.isRunning { kill(leader.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 1.5)
        let null = try FileDescriptor.open("/dev/null", O_WRONLY)
        let started = monotonicSeconds()
        let loop: UserProcess
        do throws(UserProcess.SpawnError) {
            loop = try UserProcess.spawn("/bin/sh", arguments: ["sh", "-c", "while :; do pkill -KILL -u \(account.uid) -x sleep; done"],
                                         environment: ["PATH=/usr/bin:/bin"], directory: "/", uid: account.uid, gid: account.gid,
                                         realGID: account.gid, groups: [account.gid], output: null.rawValue)
            try loop.release()
        } catch {
            throw Failure(description: "cannot start the kill loop: \(error)")
        }
        defer { loop.send(SIGKILL) }
        while leader.isRunning && monotonicSeconds() - started < 30 { usleep(1000) }
        let ended = monotonicSeconds() - started
        guard !leader.isRunning else { throw Failure(description: "the session did not end within 30 s of the kill loop's start") }
        let endFigure = median(endBaseline)
        print("required monitor: the user's kill loop start to the session ended: \(formatted(ended * 1000, digits: 0)) ms "
            + "(target ≤ 5000 ms)")
        print("baseline: a session's leader ended directly with SIGTERM, median of \(endBaseline.count): "
            + "\(formatted(endFigure * 1000, digits: 2)) ms")
        print("ratio: \(formatted(ended / endFigure, digits: 1))× the baseline")
        fflush(nil)
    }

    /// An app folder in `root`: its monitor script, a copy of this program
    /// as its program, and a desktop entry declaring the monitor.
    /// - Returns: the app's folder.
    private func makeApp(_ appID: String, name: String, in root: String, from own: URL, monitor: String,
                         arguments: String = "", extraKeys: String = "") throws -> String {
        let fm = FileManager.default
        let app = "\(root)/\(appID)"
        try fm.createDirectory(atPath: "\(app)/bin", withIntermediateDirectories: true)
        try monitor.write(toFile: "\(app)/bin/monitor", atomically: true, encoding: .utf8)
        chmod("\(app)/bin/monitor", 0o755)
        try fm.copyItem(atPath: own.appendingPathComponent("familycontrols-bench").path, toPath: "\(app)/familycontrols-bench")
        try """
            [Desktop Entry]
            Type=Application
            Name=\(name)
            Exec=familycontrols-bench
            X-FamilyControls=true
            X-FamilyControls-Monitor=bin/monitor\(arguments)
            \(extraKeys)
            """.write(toFile: "\(app)/\(appID).desktop", atomically: true, encoding: .utf8)
        return app
    }

    private func approve(_ appID: String, user: String, familyctl: String, socket: String) throws {
        let set = Process()
        set.executableURL = URL(fileURLWithPath: familyctl)
        set.arguments = ["set", "--user", user, "--app", appID, "approved"]
        set.environment = [GuardEndpoint.socketVariable: socket, "PATH": "/usr/bin:/bin"]
        set.standardOutput = FileHandle.nullDevice
        try set.run()
        set.waitUntilExit()
        guard set.terminationStatus == 0 else { throw Failure(description: "familyctl set failed (\(set.terminationStatus))") }
    }

    /// A process that opens a session of `user` as the PAM module would (it
    /// is the session's leader) when `open`, then waits; it says "open" first.
    private func sessionLeader(socket: String, user: String, open: Bool) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", """
            import json, os, signal, socket, sys, time
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            if sys.argv[3] == "1":
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                call = {"method": "org.familycontrols.guard.OpenSession",
                        "parameters": {"token": os.urandom(16).hex(), "user": sys.argv[2], "service": "bench"}}
                s.sendall(json.dumps(call).encode() + b"\\0")
                s.recv(4096)
            print("open", flush=True)
            time.sleep(600)
            """, socket, user, open ? "1" : "0"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("open") else {
            throw Failure(description: "the session's leader did not start")
        }
        return process
    }

    /// The baseline: a leader like the session's, ended directly with SIGTERM.
    private func directEnd(socket: String) throws -> Double {
        let leader = try sessionLeader(socket: socket, user: "", open: false)
        let started = monotonicSeconds()
        kill(leader.processIdentifier, SIGTERM)
        while leader.isRunning { usleep(100) }
        return monotonicSeconds() - started
    }

    /// The baseline: the monitor spawned here as the user, to its first line, then killed and reaped.
    private func directStarts(account: UserAccount, program: String, fifo: String, lines: FileDescriptor) throws -> [Double] {
        var figures: [Double] = []
        let null = try FileDescriptor.open("/dev/null", O_WRONLY)
        for _ in 0..<runs {
            let started = monotonicSeconds()
            let process: UserProcess
            do throws(UserProcess.SpawnError) {
                process = try UserProcess.spawn(program, arguments: [program, fifo], environment: ["PATH=/usr/bin:/bin"],
                                                directory: "/", uid: account.uid, gid: account.gid, realGID: 65534,
                                                groups: [account.gid], output: null.rawValue)
                try process.release()
            } catch {
                throw Failure(description: "cannot start the monitor directly: \(error)")
            }
            _ = try firstLine(lines, timeout: 10)
            figures.append(monotonicSeconds() - started)
            process.send(SIGKILL)
            while process.poll() == nil { usleep(100) }
        }
        return figures
    }

    /// Waits for one "up PID" line on `lines`; returns the pid.
    private func firstLine(_ lines: FileDescriptor, timeout: Double) throws -> pid_t {
        var buffer = [UInt8](repeating: 0, count: 256)
        var line: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var descriptor = pollfd(fd: lines.rawValue, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(lines.rawValue, $0.baseAddress, 1) }
            guard count == 1 else { continue }
            if buffer[0] == UInt8(ascii: "\n") {
                let text = String(decoding: line, as: UTF8.self)
                guard text.hasPrefix("up "), let pid = pid_t(text.dropFirst(3)) else { throw Failure(description: "unexpected line \(text)") }
                return pid
            }
            line.append(buffer[0])
        }
        throw Failure(description: "no monitor line within \(Int(timeout)) s")
    }

    private func shell(_ program: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus))")
        }
    }
}

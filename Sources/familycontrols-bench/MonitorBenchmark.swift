// How fast a killed monitor is back: a real Guard runs a monitor as a
// throwaway child user in a session the benchmark opens (as the PAM session
// module would), the monitor is killed with SIGKILL, and the time to the new
// monitor's first line is measured. The baseline, in the same run: the same
// monitor program started directly as the same user, through the same
// spawn, to its first line.
import FamilyControlsModel
import Foundation
import SystemKit
import Varlink
import VarlinkClientKit

/// `familycontrols-bench monitor [--runs N]`: needs root (the Guard does, and a user is made).
func runMonitorBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench monitor: must be run as root (it starts a Guard and makes a user)\n")
        return 77
    }
    var runs = 100
    if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count, let value = Int(arguments[index + 1]), value > 0 {
        runs = value
    }
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
        defer { try? fm.removeItem(atPath: directory) }
        let user = "fcbm\(getpid() % 100_000)"
        try shell("/usr/sbin/useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", user])
        defer { _ = try? shell("/usr/sbin/userdel", ["-f", user]) }
        guard let account = try UserDatabase.user(named: user) else { throw Failure(description: "useradd made no \(user)") }

        // The monitor: its first line down a FIFO the benchmark holds open, then it waits.
        let fifo = "\(directory)/lines"
        guard mkfifo(fifo, 0o600) == 0, chown(fifo, account.uid, account.gid) == 0 else {
            throw Failure(description: "cannot make \(fifo): \(Errno.current("mkfifo"))")
        }
        let app = "\(directory)/apps/\(user)/\(Self.appID)"
        try fm.createDirectory(atPath: "\(app)/bin", withIntermediateDirectories: true)
        try "#!/bin/sh\necho \"up $$\" > \"$1\"\nexec sleep 100000\n".write(toFile: "\(app)/bin/monitor", atomically: true, encoding: .utf8)
        chmod("\(app)/bin/monitor", 0o755)
        try fm.copyItem(atPath: own.appendingPathComponent("familycontrols-bench").path, toPath: "\(app)/familycontrols-bench")
        try """
            [Desktop Entry]
            Type=Application
            Name=Bench Monitor
            Exec=familycontrols-bench
            X-FamilyControls=true
            X-FamilyControls-Monitor=bin/monitor \(fifo)

            """.write(toFile: "\(app)/\(Self.appID).desktop", atomically: true, encoding: .utf8)
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
            guardProcess.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        while !fm.fileExists(atPath: socket) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let client = try VarlinkClient(path: socket, connectTimeout: .seconds(5), replyTimeout: .seconds(30))
        // A session of the user whose leader is this process, as the PAM module opens one.
        let digits = Array("0123456789abcdef")
        let token = String((0..<32).map { _ in digits[Int.random(in: 0..<digits.count)] })
        _ = try client.call(GuardEndpoint.qualified("OpenSession"), parameters:
                            ["token": .string(token), "user": .string(user), "service": .string("bench")])
        let set = Process()
        set.executableURL = URL(fileURLWithPath: familyctl)
        set.arguments = ["set", "--user", user, "--app", Self.appID, "approved"]
        set.environment = [GuardEndpoint.socketVariable: socket, "PATH": "/usr/bin:/bin"]
        set.standardOutput = FileHandle.nullDevice
        try set.run()
        set.waitUntilExit()
        guard set.terminationStatus == 0 else { throw Failure(description: "familyctl set failed (\(set.terminationStatus))") }
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

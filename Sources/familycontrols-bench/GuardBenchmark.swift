// The real Guard's status call: a Guard process on a temporary socket, and a
// copy of this benchmark installed as a managed app (so the Guard identifies
// it as an app, as it would a real one) measuring round trips and throughput
// against the bare-socket floor. Then the Guard's idle resident memory.
import FamilyControlsModel
import Foundation
import SystemKit

/// `familycontrols-bench guard [--clients N] [--seconds S]`: needs root (the Guard does).
func runGuardBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench guard: must be run as root (it starts a Guard)\n")
        return 77
    }
    do {
        try GuardBenchmark(extraArguments: arguments).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench guard: \(error)\n")
        return 1
    }
}

private struct GuardBenchmark {
    static let appID = "org.familycontrols.Bench"
    let extraArguments: [String]

    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() throws {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let guardBinary = own.deletingLastPathComponent().appendingPathComponent("familycontrolsd").path
        guard FileManager.default.isExecutableFile(atPath: guardBinary) else {
            throw Failure(description: "no familycontrolsd beside \(own.path); build it first (swift build -c release)")
        }
        let directory = "/tmp/fcbench-guard-\(getpid())"
        let fm = FileManager.default
        try? fm.removeItem(atPath: directory)
        defer { try? fm.removeItem(atPath: directory) }
        let app = "\(directory)/apps/root/\(Self.appID)"
        try fm.createDirectory(atPath: app, withIntermediateDirectories: true)
        try fm.copyItem(atPath: own.path, toPath: "\(app)/familycontrols-bench")
        try "[Desktop Entry]\nType=Application\nName=Bench\nExec=familycontrols-bench\nX-FamilyControls=true\n"
            .write(toFile: "\(app)/\(Self.appID).desktop", atomically: true, encoding: .utf8)
        try "[Apps]\nRoots=\(directory)/apps/%u\n".write(toFile: "\(directory)/guard.conf", atomically: true, encoding: .utf8)

        let socket = "\(directory)/guard.socket"
        // Same placement for the floor and the Guard: both servers on one CPU, the
        // measuring client on another, so neither figure rides on a lucky schedule.
        let pinned = ProcessInfo.processInfo.activeProcessorCount >= 2 && fm.isExecutableFile(atPath: "/usr/bin/taskset")
        func launch(_ process: Process, _ executable: String, _ arguments: [String], cpu: Int) {
            if pinned {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
                process.arguments = ["-c", String(cpu), executable] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
            }
        }
        let guardProcess = Process()
        launch(guardProcess, guardBinary, ["--socket", socket, "--state-dir", "\(directory)/state", "--config", "\(directory)/guard.conf"], cpu: 1)
        guardProcess.standardError = FileHandle.nullDevice
        try guardProcess.run()
        defer {
            guardProcess.terminate()
            guardProcess.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        while !fm.fileExists(atPath: socket) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        Thread.sleep(forTimeInterval: 0.2)
        let idle = residentKilobytes(of: guardProcess.processIdentifier)

        let echoPath = "\(directory)/echo.socket"
        let echo = Process()
        launch(echo, own.path, ["echo-server", echoPath], cpu: 1)
        try echo.run()
        defer { echo.terminate() }
        while !fm.fileExists(atPath: echoPath) && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }

        let placement = pinned ? " (servers on CPU 1, client on CPU 0)" : ""
        let method = GuardEndpoint.qualified("GetStatus")
        FileHandle.standardOutput.write(Data("The Guard's status call (\(method)) from a managed app, against a bare round trip to an echo process\(placement):\n".utf8))
        let common = ["socket", "--socket", socket, "--method", method, "--parameters", "{}"]
        // Round trips pinned as above; throughput with the scheduler free to use both CPUs.
        let roundTrips = Process()
        launch(roundTrips, "\(app)/familycontrols-bench", common + ["--floor-socket", echoPath, "--only", "round-trip"] + extraArguments, cpu: 0)
        let throughput = Process()
        throughput.executableURL = URL(fileURLWithPath: "\(app)/familycontrols-bench")
        throughput.arguments = common + ["--only", "throughput"] + extraArguments
        for client in [roundTrips, throughput] {
            client.environment = ["PATH": "/usr/bin:/bin"]
            try client.run()
            client.waitUntilExit()
            guard client.terminationStatus == 0 else { throw Failure(description: "the measuring app failed") }
        }
        let busy = residentKilobytes(of: guardProcess.processIdentifier)
        let met = idle < 20 * 1024 ? "met" : "NOT met"
        print("(e) Guard resident memory:         \(idle) kB idle after start [target < 20480 kB: \(met)]; \(busy) kB after the load")
    }
}

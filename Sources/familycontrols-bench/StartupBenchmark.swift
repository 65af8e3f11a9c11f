// Two builds of the same programs side by side: how long `familyctl --help`
// takes from exec to exit, and how much memory an idle Guard holds. Made for
// the Swift runtime linked in (Config/build.sh) against the runtime loaded
// from the toolchain (a plain `swift build -c release`), but any two folders
// with familyctl and familycontrolsd in them will do.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SystemKit

/// `familycontrols-bench startup [--runs N] BASELINE_DIR OTHER_DIR…`: the Guard
/// part needs root (the Guard does).
func runStartupBenchmark(_ arguments: [String]) -> Int32 {
    var runs = 200
    var folders: [String] = []
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        if argument == "--runs" {
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                writeToStandardError("familycontrols-bench startup: --runs needs a positive number\n")
                return 64
            }
            runs = value
        } else {
            folders.append(argument)
        }
    }
    guard folders.count >= 2 else {
        writeToStandardError("usage: familycontrols-bench startup [--runs N] BASELINE_DIR OTHER_DIR…\n")
        return 64
    }
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench startup: must be run as root (it starts Guards)\n")
        return 77
    }
    do {
        try StartupBenchmark(folders: folders, runs: runs).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench startup: \(error)\n")
        return 1
    }
}

private struct StartupBenchmark {
    let folders: [String]
    let runs: Int
    /// Starts of each Guard; its memory is the median of these.
    let guardStarts = 5
    /// What the programs see: no toolchain on PATH, nothing inherited.
    let environment = ["PATH=/usr/bin:/bin"]

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// The Guard's memory once it is idle, from /proc/PID/status, in kB.
    typealias Memory = ResidentMemory

    func run() throws {
        for folder in folders {
            for program in ["familyctl", "familycontrolsd"] where !FileManager.default.isExecutableFile(atPath: "\(folder)/\(program)") {
                throw Failure(description: "no \(program) in \(folder)")
            }
        }
        // Alternated run by run, so a busy moment of the machine falls on every build alike.
        var times = Array(repeating: [Double](), count: folders.count)
        for round in 0..<(runs + 5) {
            for (index, folder) in folders.enumerated() {
                let elapsed = try timed("\(folder)/familyctl", ["--help"])
                if round >= 5 { times[index].append(elapsed) }  // the first few fill the page cache
            }
        }
        print("`familyctl --help`, exec to exit, median of \(runs) runs (p10–p90), env PATH=/usr/bin:/bin:")
        let baseline = median(times[0])
        for (index, folder) in folders.enumerated() {
            let sorted = times[index].sorted()
            let ratio = index == 0 ? "baseline" : formatted(median(sorted) / baseline, digits: 2) + "× the baseline"
            print("  \(milliseconds(median(sorted))) (\(milliseconds(percentile(sorted, 0.1)))–"
                + "\(milliseconds(percentile(sorted, 0.9))))   \(ratio)   \(folder) [\(runtime(of: folder))]")
        }

        print("The Guard's memory when idle after start (no family configured), median of \(guardStarts) starts:")
        var baselineResident = 0
        for (index, folder) in folders.enumerated() {
            var memories: [Memory] = []
            for _ in 0..<guardStarts { memories.append(try idleGuard("\(folder)/familycontrolsd")) }
            func middle(_ value: (Memory) -> Int) -> Int { memories.map(value).sorted()[memories.count / 2] }
            let resident = middle(\.resident)
            if index == 0 { baselineResident = resident }
            let ratio = index == 0 ? "baseline" : formatted(Double(resident) / Double(baselineResident), digits: 2) + "× the baseline"
            print("  VmRSS \(megabytes(resident)) (anonymous \(megabytes(middle(\.anonymous))), "
                + "file-backed \(megabytes(middle(\.fileBacked))))   \(ratio)   \(folder)")
        }
    }

    /// Whether the folder's familyctl loads the Swift runtime from a shared library, and from where.
    private func runtime(of folder: String) -> String {
        let maps = (try? loadedLibraries(of: "\(folder)/familyctl")) ?? []
        guard let core = maps.first(where: { $0.hasSuffix("/libswiftCore.so") }) else { return "Swift runtime linked in" }
        return "Swift runtime from \(core)"
    }

    /// The shared objects a program maps, from the loader's own list (LD_TRACE_LOADED_OBJECTS, as ldd does).
    private func loadedLibraries(of program: String) throws -> [String] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("fcbench-ldd-\(getpid())").path
        defer { unlink(output) }
        _ = try timed(program, [], environment: environment + ["LD_TRACE_LOADED_OBJECTS=1"], output: output)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/") }.map(String.init)
        }
    }

    /// Runs `program` to its end and returns the seconds from spawn to reaped.
    private func timed(_ program: String, _ arguments: [String], environment: [String]? = nil,
                       output: String = "/dev/null") throws -> Double {
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? self.environment).map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let start = monotonicSeconds()
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, &argv, &envp)
        guard spawned == 0 else { throw Errno(spawned, operation: "posix_spawn \(program)") }
        var status: CInt = 0
        _ = try retryingOnInterrupt("waitpid") { waitpid(pid, &status, 0) }
        let elapsed = monotonicSeconds() - start
        guard status == 0 else { throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (wait status \(status))") }
        return elapsed
    }

    /// Starts a Guard on a socket and store of its own, waits until its start-up
    /// reconcile is done, and reads its memory.
    private func idleGuard(_ program: String) throws -> Memory {
        let fm = FileManager.default
        let directory = "/tmp/fcbench-startup-\(getpid())"
        try? fm.removeItem(atPath: directory)
        try fm.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? fm.removeItem(atPath: directory) }
        try "".write(toFile: "\(directory)/guard.conf", atomically: false, encoding: .utf8)
        let log = "\(directory)/guard.log"
        _ = fm.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["--socket", "\(directory)/guard.socket", "--state-dir", "\(directory)/state",
                             "--config", "\(directory)/guard.conf"]
        process.environment = ["PATH": "/usr/bin:/bin"]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(20)
        while !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains(" reconcile: ") {
            guard process.isRunning, Date() < deadline else {
                throw Failure(description: "\(program) did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Thread.sleep(forTimeInterval: 0.3)
        return ResidentMemory(of: process.processIdentifier)
    }


    /// The value at `fraction` of `sorted` (nearest rank).
    private func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))
        return sorted[index]
    }

    private func milliseconds(_ seconds: Double) -> String { formatted(seconds * 1000, digits: 2) + " ms" }

    private func megabytes(_ kilobytes: Int) -> String { formatted(Double(kilobytes) / 1024, digits: 1) + " MB" }

}

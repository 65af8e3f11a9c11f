#if canImport(Glibc)
import Glibc
#endif
import Foundation
import LockEngine
import Testing

@Suite("Writers of many files are found and named in one pass over /proc",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockWriterScanTests {
    @Test("every file a child holds open for writing is named with the child's command, without comm's newline, and a reader is not named")
    func everyWriterIsNamedByItsCommand() async throws {
        try await withLockScenario(extraFiles: 40) { scenario in
            let data = scenario.sandbox.app(LockAppTree.dataFile)
            let reader = try scenario.child.start(["sh", "-c", "exec 3<'\(data)'; exec sleep 60"])
            defer { LockCommand.stop(reader) }
            let writer = try WritingChild.start(scenario)
            defer { LockCommand.stop(writer.process) }

            let report = try scenario.lock()
            guard case .unenforced = report.state else {
                Issue.record("files open for writing were called \(report.state)")
                return
            }
            let named = "open for writing by process \(writer.process.processIdentifier) (python3, uid \(scenario.child.uid)) "
                + "since before the lock"
            let writerFindings = report.findings.filter { $0.contains(": open for writing by ") }
            #expect(writerFindings.count == writer.files, "\(writerFindings.count) of \(writer.files) files named")
            #expect(writerFindings.allSatisfy { $0.contains(named) }, "\(writerFindings.prefix(3))")
            #expect(!report.findings.contains { $0.contains("process \(reader.processIdentifier)") },
                    "a process that only reads is no writer")
        }
    }

    @Test("a lock with every one of 1,500 files held open for writing costs about what one with a single such file does, not a /proc scan per file")
    func manyWritersCostOneScan() async throws {
        try await withLockScenario(extraFiles: 1_500) { scenario in
            // One file with a writer: one scan of /proc, in any design.
            let one = try WritingChild.start(scenario, only: scenario.sandbox.app(LockAppTree.dataFile))
            let single = try Self.fastestLock(of: scenario) { report in
                guard case .unenforced = report.state else { throw LockTestError("a lock with a writer ended \(report.state)") }
            }
            LockCommand.stop(one.process)
            let writer = try WritingChild.start(scenario)
            defer { LockCommand.stop(writer.process) }
            let every = try Self.fastestLock(of: scenario) { report in
                let named = report.findings.count { $0.contains("open for writing by process \(writer.process.processIdentifier) (") }
                guard case .unenforced = report.state, named == writer.files else {
                    throw LockTestError("a lock with \(writer.files) writers ended \(report.state), \(named) named")
                }
            }
            // A scan per file would make it some 1,500 times the single one;
            // one scan stays within a small multiple however busy the cores
            // are (the figure itself is the benchmark's: familycontrols-bench lock).
            #expect(every <= 30 * single, "every file with a writer \(every) s, one file \(single) s")
        }
    }

    /// The fastest of three locks (each then unlocked), in seconds, each report checked.
    private static func fastestLock(of scenario: LockScenario, _ check: (LockReport) throws -> Void) throws -> Double {
        var fastest = Double.infinity
        for _ in 0..<3 {
            var report: LockReport?
            let elapsed = try ContinuousClock().measure { report = try scenario.lock() }
            if let report { try check(report) }
            try scenario.unlock()
            fastest = min(fastest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        return fastest
    }
}

/// A process of the child's holding every regular file of its app open for
/// writing (python3, so its command name is known).
private struct WritingChild {
    let process: Process
    let files: Int

    /// Starts the writer, holding every file or only the file `only`.
    static func start(_ scenario: LockScenario, only: String? = nil) throws -> WritingChild {
        let ready = scenario.sandbox.home + "/writing"
        unlink(ready)
        let script = """
            import os, sys, time
            held = []
            for root, directories, names in os.walk(sys.argv[1]):
                for name in names:
                    path = os.path.join(root, name)
                    if not os.path.islink(path) and sys.argv[3] in ('', path):
                        held.append(os.open(path, os.O_WRONLY | os.O_APPEND))
            with open(sys.argv[2] + '.tmp', 'w') as out:
                out.write(str(len(held)))
            os.rename(sys.argv[2] + '.tmp', sys.argv[2])
            time.sleep(120)
            """
        let process = try scenario.child.start(["/usr/bin/python3", "-c", script, scenario.app, ready, only ?? ""])
        for _ in 0..<400 where !LockFiles.exists(ready) { usleep(25_000) }
        guard let text = try? String(contentsOfFile: ready, encoding: .utf8), let files = Int(text), files > 0 else {
            LockCommand.stop(process)
            throw LockTestError("the writer never opened the app's files")
        }
        return WritingChild(process: process, files: files)
    }
}

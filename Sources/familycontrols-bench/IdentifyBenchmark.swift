// What the inspector costs a request: identifying a real running app (its
// memory map and its desktop entry read, as every request does once) with
// the inspector started as its own process for each file, against the same
// identification with the same reading done in this process, in the same run.
import Foundation
import GuardKit
import InspectorService
import LockEngine
import SystemKit
import GuardIdentity

/// `familycontrols-bench identify [--runs N]`: needs root (the inspector runs as nobody).
func runIdentifyBenchmark(_ arguments: [String]) -> Int32 {
    guard geteuid() == 0 else {
        writeToStandardError("familycontrols-bench identify: must be run as root (the inspector runs as nobody)\n")
        return 77
    }
    let runs = runs(in: arguments, fallback: 200)
    do {
        try IdentifyBenchmark(runs: runs).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench identify: \(error)\n")
        return 1
    }
}

private struct IdentifyBenchmark {
    static let appID = "org.familycontrols.BenchIdentify"
    let runs: Int

    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() throws {
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("fc-bench-identify-\(getpid())").path
        defer { try? fm.removeItem(atPath: root) }
        let app = "\(root)/\(Self.appID)"
        try fm.createDirectory(atPath: app, withIntermediateDirectories: true)
        chmod(root, 0o755)
        // The app: a copy of sleep(1), which its desktop entry names.
        try fm.copyItem(atPath: "/bin/sleep", toPath: "\(app)/bench-app")
        try "[Desktop Entry]\nName=Bench\nExec=bench-app\nX-FamilyControls=true\n"
            .write(toFile: "\(app)/\(Self.appID).desktop", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "\(app)/bench-app")
        process.arguments = ["1000"]
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        let pid = process.processIdentifier

        let separate = AppIdentifier(inspector: .standard)
        var inProcess = Inspector.standard
        inProcess.inProcess = { Answers.reply(toCall: $0, input: $1) }
        let inThisProcess = AppIdentifier(inspector: inProcess)

        // Both once, so each answers alike before anything is timed.
        for identifier in [separate, inThisProcess] {
            let (identity, _) = try identify(identifier, pid: pid, root: root)
            guard identity.appID == Self.appID else { throw Failure(description: "identified \(identity.appID)") }
        }
        var inspected: [Double] = [], baseline: [Double] = []
        for _ in 0..<runs {
            // Interleaved, so both see the same machine.
            baseline.append(try timed { _ = try identify(inThisProcess, pid: pid, root: root) })
            inspected.append(try timed { _ = try identify(separate, pid: pid, root: root) })
        }
        let (with, without) = (median(inspected), median(baseline))
        print("identify: \(runs) runs of a running app's identification (memory map and desktop entry)")
        print("  read in the Guard's process (before):       \(formatted(without * 1000, digits: 3)) ms median")
        print("  read by familycontrols-inspect (after):     \(formatted(with * 1000, digits: 3)) ms median")
        print("  after / before:                             \(formatted(with / without, digits: 2))×, "
              + "+\(formatted((with - without) * 1000, digits: 3)) ms per request")
    }

    private func identify(_ identifier: AppIdentifier, pid: pid_t, root: String) throws -> (AppIdentity, OpenedDirectory) {
        do throws(IdentityError) {
            return try identifier.identify(pid: pid, pidfd: nil, uid: 0, roots: [root])
        } catch {
            throw Failure(description: "\(error)")
        }
    }

    private func timed(_ body: () throws -> Void) throws -> Double {
        let start = monotonicSeconds()
        try body()
        return monotonicSeconds() - start
    }
}

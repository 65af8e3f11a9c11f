import Foundation
import Testing
import TestSupport

/// `Config/build.sh`, which the install and the package build on, against a
/// `swift` that fails: SwiftPM itself sometimes dies of a signal on Linux
/// (a bad pointer in libdispatch's event loop), and that is run once more;
/// a build that fails on its own is not.
@Suite(.serialized)
struct BuildScriptTests {
    @Test func aSwiftBuildKilledByASignalIsRunOnceMore() async throws {
        // Twice in a row, as a loaded machine has seen.
        let result = try await buildScript(failing: "[ \"$calls\" -le 2 ] && [ \"$1\" = build ] && kill -SEGV $$")
        #expect(result.status == 0, "\(result.standardError.suffix(2000))")
        #expect(result.standardError.components(separatedBy: "build.sh: swift build was killed by signal 11; running it once more")
                    .count - 1 == 2, "\(result.standardError.suffix(2000))")
        #expect(result.calls > 2)
    }

    @Test func aSwiftBuildKilledEveryTimeFailsAfterThreeRuns() async throws {
        let result = try await buildScript(failing: "[ \"$1\" = build ] && kill -SEGV $$")
        #expect(result.status != 0)
        #expect(result.calls == 3, "swift build ran \(result.calls) times")
    }

    @Test func aSwiftBuildThatFailsOnItsOwnIsNotRunAgain() async throws {
        let result = try await buildScript(failing: "echo 'error: no such module' >&2; exit 1")
        #expect(result.status != 0)
        #expect(result.calls == 1, "swift build ran \(result.calls) times")
        #expect(!result.standardError.contains("running it once more"), "\(result.standardError.suffix(2000))")
    }

    /// Runs `Config/build.sh` on the programs already built, with a `swift`
    /// first on PATH that counts its calls (`$calls`), runs `failure` (shell),
    /// and then hands over to the real one.
    private func buildScript(failing failure: String) async throws
        -> (status: Int32, standardError: String, calls: Int) {
        _ = try await ReleaseBuild.binDirectory()
        let swift = try await sh("command -v swift").requireSuccess().standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return try await withTemporaryDirectory { directory in
            let wrapper = "\(directory)/bin/swift", counter = "\(directory)/calls"
            try FileManager.default.createDirectory(atPath: "\(directory)/bin", withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                calls=$(( $(cat '\(counter)' 2>/dev/null || echo 0) + 1 ))
                echo "$calls" > '\(counter)'
                \(failure)
                exec '\(swift)' "$@"
                """
            #expect(FileManager.default.createFile(atPath: wrapper, contents: Data(script.utf8)))
            chmod(wrapper, 0o755)
            let path = "\(directory)/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
            let result = try await run("\(packageRoot)/Config/build.sh", [], environment: ["PATH": path])
            let calls = Int((try? String(contentsOfFile: counter, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            return (result.status, result.standardError, calls)
        }
    }
}

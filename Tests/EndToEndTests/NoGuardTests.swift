import Foundation
import Testing
import TestSupport

/// A sandbox or container without the Guard's socket: the app fails at once.
@Suite(.enabled(if: productExists("familycontrols-demo"), "run `swift build` first: the test runs the real demo app"))
struct NoGuardTests {
    @Test(arguments: [["request", "--member", "child", "--stdin"], ["request", "--member", "individual", "--stdin"], ["revoke"]])
    func everyCallFailsWithUnavailableAtOnce(arguments: [String]) async throws {
        let socket = "/tmp/fc-no-guard-\(UUID().uuidString.prefix(8)).socket"
        // Timed on the thread that waits for the process: the app's own time, not the test pool's.
        let (result, elapsed) = try await offload {
            let started = Date()
            let result = try run(productPath("familycontrols-demo"), arguments, input: "y\n",
                                 environment: ["FAMILYCONTROLS_SOCKET": socket]) as ProcessResult
            return (result, Date().timeIntervalSince(started))
        }
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("error 1 unavailable: "))
        // Idle, the whole process takes about 10 ms. The bound is loose because the
        // other suites load both cores; a hang (a wait on any timeout) would exceed it.
        #expect(elapsed < 5.0, "took \(elapsed) s")
    }
}

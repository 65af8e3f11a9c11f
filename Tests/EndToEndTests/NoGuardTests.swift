import Foundation
import Testing
import TestSupport

/// A sandbox or container without the Guard's socket: the app fails at once.
@Suite(.enabled(if: productExists("familycontrols-demo"), "run `swift build` first: the test runs the real demo app"))
struct NoGuardTests {
    @Test(arguments: [["request", "--member", "child", "--stdin"], ["request", "--member", "individual", "--stdin"], ["revoke"]])
    func everyCallFailsWithUnavailableAtOnce(arguments: [String]) async throws {
        let started = Date()
        let result = try await run(productPath("familycontrols-demo"), arguments, input: "y\n",
                                   environment: ["FAMILYCONTROLS_SOCKET": "/tmp/fc-no-guard-\(UUID().uuidString.prefix(8)).socket"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("error 1 unavailable: "))
        // Idle, the whole process takes about 10 ms. The bound is loose because the
        // other suites load both cores; a hang (a wait on any timeout) would exceed it.
        #expect(elapsed < 5.0, "took \(elapsed) s")
    }
}

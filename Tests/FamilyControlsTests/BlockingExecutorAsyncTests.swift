#if canImport(Glibc)
import Glibc
#endif
@testable import FamilyControls
import SystemKit
import Testing
import TestSupport

/// The bridge from the app library's `async` calls to the blocking pool.
@Suite struct BlockingExecutorAsyncTests {
    @Test func runBridgesAsyncCodeToBlockingWork() async throws {
        let executor = BlockingExecutor(name: "test-run", maximumThreads: 2, maximumQueued: 8)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<8 {
                group.addTask {
                    try await executor.run {
                        usleep(1_000)
                        return value * value
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values.sorted() == (0..<8).map { $0 * $0 })
    }

    @Test func runThrowsWhenThePoolRefuses() async throws {
        let executor = BlockingExecutor(name: "test-run-full", maximumThreads: 1, maximumQueued: 0)
        let gate = Gate()
        try executor.submit { gate.pass() }
        #expect(pollUntil { gate.arrived.load(ordering: .relaxed) == 1 })
        await #expect(throws: BlockingExecutor.Saturated.self) {
            _ = try await executor.run { 1 }
        }
        gate.release()
    }
}

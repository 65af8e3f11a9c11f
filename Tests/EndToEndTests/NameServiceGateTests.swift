import Synchronization
import Testing

/// The gate that keeps Guard fixtures out of a directory test's way, each
/// test on a gate of its own (the suite's real directory tests are not held up).
@Suite struct NameServiceGateTests {
    /// What happened, in order.
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    private func waitUntil(_ condition: () async -> Bool) async throws {
        for _ in 0..<3000 where !(await condition()) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await condition(), "gave up waiting")
    }

    @Test func aDirectoryWaitsForTheGuardsRunningAndLaterGuardsWaitForIt() async throws {
        let gate = NameServiceGate()
        let log = Log()
        let firstMayEnd = Mutex(false)
        // Detached: a task started inside a fixture would inherit its hold.
        let first = Task.detached {
            try await gate.sharing {
                log.add("first guard")
                while !firstMayEnd.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                log.add("first guard ends")
            }
        }
        try await waitUntil { log.all == ["first guard"] }
        let directory = Task.detached { try await gate.alone { log.add("directory") } }
        try await waitUntil { await gate.waiting.alone == 1 }
        let later = Task.detached { try await gate.sharing { log.add("later guard") } }
        try await waitUntil { await gate.waiting.shared == 1 }
        #expect(log.all == ["first guard"], "neither the directory nor a later Guard runs beside a running Guard")
        firstMayEnd.withLock { $0 = true }
        try await first.value
        try await directory.value
        try await later.value
        #expect(log.all == ["first guard", "first guard ends", "directory", "later guard"])
    }

    @Test func aGuardInsideAFixtureThatHoldsTheGateDoesNotWait() async throws {
        let gate = NameServiceGate()
        let inner = try await gate.alone {
            try await gate.sharing { try await gate.sharing { "ran" } }
        }
        #expect(inner == "ran")
        await #expect(throws: (any Error).self, "a directory inside a Guard fixture would wait for itself") {
            try await gate.sharing { try await gate.alone { } }
        }
        #expect(await gate.waiting == (0, 0))
    }
}

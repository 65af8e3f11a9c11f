import FamilyConfiguration
import Foundation
@testable import GuardKit
import GuardIdentity
import Synchronization
import SystemKit
import Testing
import TestSupport
@testable import GuardSessions
@testable import GuardStore

/// The monitors' thread wakes on events: with nothing approved it reads the
/// approvals once and then only when told of a change; while a child's app
/// is approved it also reads them again on the clock (its files can change
/// under it). The keeper runs in this process, its store a counting closure.
@Suite struct MonitorKeeperWakeUpTests {
    private func withKeeper<R>(approvals: [AuthorizationRecord],
                               _ body: (MonitorKeeper, ReadCount) async throws -> R) async throws -> R {
        let reads = ReadCount()
        let keeper = MonitorKeeper()
        try keeper.start(MonitorKeeper.Context(
            sessions: { [] }, logind: nil,
            approvals: {
                reads.count.withLock { $0 += 1 }
                return approvals
            },
            configuration: { GuardConfiguration() }, enforcer: NoEnforcer(), audit: { _, _, _, _ in },
            socketPath: "/nonexistent", record: nil, logger: Logger(label: "test")))
        defer { keeper.stopAll() }
        return try await body(keeper, reads)
    }

    /// Waits until `reads` reaches `count`, at most `seconds`.
    private func waitUntil(_ reads: ReadCount, reach count: Int, within seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if reads.value >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return reads.value >= count
    }

    private var rereadAfter: Double {
        Double(MonitorKeeper.Supervisor.approvalsReread.components.seconds)
    }

    @Test func withNothingApprovedTheThreadReadsOnceThenOnlyWhenToldOfAChange() async throws {
        try await withKeeper(approvals: []) { keeper, reads in
            #expect(await waitUntil(reads, reach: 1, within: 10), "the first pass reads the approvals")
            // Longer than the clock's period: nothing to read again for.
            try await Task.sleep(for: .seconds(rereadAfter + 2))
            #expect(reads.value == 1, "the thread woke with nothing approved and nothing changed")
            keeper.approvalsChanged()
            #expect(await waitUntil(reads, reach: 2, within: 5), "a change the Guard made is read at once")
        }
    }

    @Test func whileAChildsAppIsApprovedTheApprovalsAreReadAgainOnTheClock() async throws {
        let record = AuthorizationRecord(user: "nobody", uid: 65534, appID: "org.example.App", member: .child,
                                         status: .approved, updatedAt: .now, appPath: "/nonexistent/org.example.App")
        try await withKeeper(approvals: [record]) { _, reads in
            #expect(await waitUntil(reads, reach: 1, within: 10), "the first pass reads the approvals")
            #expect(await waitUntil(reads, reach: 2, within: rereadAfter + 10),
                    "an approved app's files can change under it: the approvals are read again on the clock")
        }
    }
}

/// How many times the keeper read the approvals.
private final class ReadCount: Sendable {
    let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
}

/// An enforcer these tests never reach: no session is open.
private struct NoEnforcer: SessionEnforcing {
    func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String) {
        Issue.record("no session is open, yet the keeper enforced \(consequence) on \(sessions.map(\.name)): \(reason)")
    }
}

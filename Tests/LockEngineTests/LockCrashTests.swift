import TestSupport
import LockEngine
import Synchronization
import Testing

/// Stands in for SIGKILL: thrown from the engine's hook after `limit` changes.
struct LockSimulatedCrash: Error, Equatable {}

/// Counts the engine's changes and "crashes" when the count reaches `limit`.
final class LockCrashSwitch: Sendable {
    private let count = Mutex(0)
    let limit: Int

    init(after limit: Int) { self.limit = limit }

    var hooks: LockEngineHooks {
        LockEngineHooks { [self] _ in
            let reached = count.withLock { count -> Bool in
                defer { count += 1 }
                return count >= limit
            }
            if reached { throw LockSimulatedCrash() }
        }
    }
}

@Suite("A lock or unlock interrupted at any point is finished by resume",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockCrashTests {
    @Test("lock crashes after N changes; resume locks every entry", arguments: [0, 1, 2, 7, 20, 60])
    func lockCrashThenResume(after changes: Int) async throws {
        try await withLockScenario(extraFiles: 40, hooks: LockCrashSwitch(after: changes).hooks) { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockSimulatedCrash()) { try scenario.lock() }
            #expect(try scenario.record()?.state == .locking)
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems().count > 0)

            let done = try scenario.restartedEngine().resume()
            #expect(done.count == 1 && done[0].hasPrefix("finished locking"), "\(done)")
            #expect(try scenario.record()?.state == .locked)
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.unlockedItems().isEmpty, "\(locked.unlockedItems())")

            _ = try scenario.restartedEngine().unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("entries the child creates before an interrupted lock finishes are recorded with their own metadata")
    func childAddsEntriesDuringCrash() async throws {
        try await withLockScenario(extraFiles: 40, hooks: LockCrashSwitch(after: 0).hooks) { scenario in
            #expect(throws: LockSimulatedCrash()) { try scenario.lock() }
            // Nothing changed yet, so the child still owns its directory.
            let added = scenario.sandbox.app("late.txt")
            let addedDirectory = scenario.sandbox.app("late-dir")
            try scenario.child.run(["sh", "-c", "echo late > '\(added)' && chmod 600 '\(added)' && "
                + "mkdir '\(addedDirectory)' && echo x > '\(addedDirectory)/inner'"])
            let withLate = try TreeSnapshot.take(scenario.app)
            #expect(withLate["late.txt"]?.uid == scenario.child.uid)

            _ = try scenario.restartedEngine().resume()
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.unlockedItems().isEmpty, "\(locked.unlockedItems())")
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            let late = try #require(entries.first { $0.relativePath == "late.txt" })
            #expect(late.uid == scenario.child.uid && late.mode == 0o600, "recorded as the child left it, not as locked")
            #expect(entries.contains { $0.relativePath == "late-dir/inner" && $0.uid == scenario.child.uid })

            _ = try scenario.restartedEngine().unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(try TreeSnapshot.take(scenario.app) == withLate)
        }
    }

    @Test("unlock crashes after N changes; resume restores everything exactly", arguments: [0, 1, 2, 7, 20, 60])
    func unlockCrashThenResume(after changes: Int) async throws {
        try await withLockScenario(extraFiles: 40) { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            let crashing = scenario.restartedEngine(hooks: LockCrashSwitch(after: changes).hooks)
            #expect(throws: LockSimulatedCrash()) {
                try crashing.unlock(user: scenario.child.name, appID: LockScenario.appID)
            }
            #expect(try scenario.record()?.state == .unlocking)

            let done = try scenario.restartedEngine().resume()
            #expect(done.count == 1 && done[0].hasPrefix("finished unlocking"), "\(done)")
            #expect(try scenario.record() == nil)
            let after = try TreeSnapshot.take(scenario.app)
            #expect(after == before, "\(after)\n---\n\(before)")
        }
    }

    @Test("a resume that crashes too is finished by the next one", arguments: [(3, 5), (25, 1), (0, 30)])
    func crashDuringResume(lockCrash: Int, resumeCrash: Int) async throws {
        try await withLockScenario(extraFiles: 40, hooks: LockCrashSwitch(after: lockCrash).hooks) { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockSimulatedCrash()) { try scenario.lock() }
            let lines = try scenario.restartedEngine(hooks: LockCrashSwitch(after: resumeCrash).hooks).resume()
            #expect(lines.count == 1 && lines[0].hasPrefix("could not finish"), "\(lines)")
            #expect(try scenario.record()?.state == .locking)
            _ = try scenario.restartedEngine().resume()
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems().isEmpty)
            _ = try scenario.restartedEngine().unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("lock after a crash finishes the job instead of recording the locked state as original")
    func relockAfterCrashUsesRecordedOriginals() async throws {
        try await withLockScenario(extraFiles: 10, hooks: LockCrashSwitch(after: 5).hooks) { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockSimulatedCrash()) { try scenario.lock() }
            let restarted = scenario.restartedEngine()
            let report = try restarted.lock(user: scenario.child.name, appID: LockScenario.appID, directory: scenario.app)
            #expect(report.state == .locked)
            #expect(scenario.journal.entryWrites == 1, "the originals recorded before the crash are kept")
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(entries.allSatisfy { $0.uid == scenario.child.uid }, "originals, never root")
            _ = try restarted.unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }
}

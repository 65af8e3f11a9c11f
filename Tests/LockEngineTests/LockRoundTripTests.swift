import TestSupport
import LockEngine
import SystemKit
import Testing

@Suite("Lock and unlock round trip", .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockRoundTripTests {
    @Test("lock makes every directory and file immutable and changes nothing else: the child still runs its app")
    func lockLocksEverything() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            let report = try scenario.lock()
            #expect(report.state == .locked)
            #expect(report.findings.isEmpty)
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.unlockedItems().isEmpty, "\(locked.unlockedItems())")
            #expect(locked.changes(from: before).isEmpty, "owner, mode, contents and links stay: \(locked.changes(from: before))")
            #expect(locked[LockAppTree.setuidHelper]?.mode == 0o4755)
            let run = try scenario.child.run([scenario.sandbox.app(LockAppTree.executable)])
            #expect(run.succeeded && run.output == "demo\n", "the child still runs its locked app: \(run)")
            let deep = try scenario.child.run(["cat", scenario.sandbox.app(LockAppTree.deepFile)])
            #expect(deep.succeeded, "and reads its 0600 files in 0700 folders: \(deep)")
            let record = try #require(try scenario.record())
            #expect(record.state == .locked)
            #expect(record.path == scenario.app)
            #expect(try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID).count
                == before.items.count)
        }
    }

    @Test("entries are journaled in one batch before anything changes")
    func journalFirstInOneBatch() async throws {
        let observedState = LockObservations()
        try await withLockScenario(hooks: LockEngineHooks { path in observedState.note(path) }) { scenario in
            observedState.journal = scenario.journal
            observedState.user = scenario.child.name
            try scenario.lock()
            #expect(scenario.journal.entryWrites == 1)
            #expect(observedState.statesAtChanges == [.locking], "every change happened with the journal saying locking")
            #expect(observedState.entryCountsAtChanges == [try TreeSnapshot.take(scenario.app).items.count])
        }
    }

    @Test("unlock restores owner, group, mode and flags exactly; the child can then delete the app")
    func unlockRestoresExactly() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            #expect(try TreeSnapshot.take(scenario.app) != before)
            let report = try scenario.unlock()
            #expect(report.findings.isEmpty, "\(report.findings)")
            #expect(report.restoredEntries == before.items.filter { $0.isDirectory || $0.isRegular }.count)
            let after = try TreeSnapshot.take(scenario.app)
            #expect(after == before, "\(after)\n---\n\(before)")
            #expect(try scenario.record() == nil)
            #expect(try scenario.child.run(["rm", "-rf", scenario.app]).succeeded)
            #expect(!LockFiles.exists(scenario.app))
        }
    }

    @Test("locking an already locked directory is a no-op success")
    func relockIsNoOp() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            let locked = try TreeSnapshot.take(scenario.app)
            let again = try scenario.lock()
            #expect(again.state == .locked)
            #expect(scenario.journal.entryWrites == 1)
            #expect(try TreeSnapshot.take(scenario.app) == locked)
            try scenario.unlock()
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems().count > 0)
        }
    }

    @Test("an immutable flag an administrator set survives lock and unlock")
    func preexistingImmutableSurvives() async throws {
        try await withLockScenario { scenario in
            let adminLocked = [LockAppTree.dataFile, "lib/nested/deep"]
            for path in adminLocked { try LockFiles.chattr("+i", scenario.sandbox.app(path)) }
            let before = try TreeSnapshot.take(scenario.app)
            #expect(try scenario.lock().state == .locked)
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.unlockedItems(exempt: Set(adminLocked)).isEmpty)
            for path in adminLocked {
                #expect(locked[path]?.isImmutable == true)
            }
            #expect(!(try scenario.child.run(["rm", "-f", scenario.sandbox.app(LockAppTree.dataFile)]).succeeded))
            let report = try scenario.unlock()
            #expect(report.findings.isEmpty, "\(report.findings)")
            let after = try TreeSnapshot.take(scenario.app)
            #expect(after == before)
            for path in adminLocked { #expect(LockFiles.isImmutable(scenario.sandbox.app(path))) }
        }
    }

    @Test("renaming the child's Applications folder leaves the app locked, and status reports the new path")
    func renamedAncestorIsFollowed() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            let locked = try TreeSnapshot.take(scenario.app)
            let renamed = scenario.sandbox.home + "/Apps2"
            let move = try scenario.child.run(["mv", scenario.sandbox.applications, renamed])
            #expect(move.succeeded, "the child owns its Applications folder: \(move)")
            let movedApp = renamed + "/" + LockScenario.appID
            #expect(try TreeSnapshot.take(movedApp) == locked)
            #expect(!(try scenario.child.run(["rm", "-rf", movedApp]).succeeded))

            let status = try #require(try scenario.engine.status(user: scenario.child.name, appID: LockScenario.appID))
            #expect(status.path == movedApp)
            #expect(status.state == .locked)
            #expect(try scenario.record()?.path == movedApp)
            let located = try scenario.engine.locate(user: scenario.child.name, appID: LockScenario.appID)
            #expect(located.path == movedApp)

            let report = try scenario.unlock()
            #expect(report.path == movedApp)
            #expect(try TreeSnapshot.take(movedApp) == before)
        }
    }

    @Test("locate searches the candidate roots it is given")
    func locateUsesCandidates() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            // Move the whole home (as root) somewhere the engine would not look by itself.
            // Deeper than the search from the nearest surviving ancestor (the sandbox) reaches.
            let candidate = scenario.sandbox.root + "/moved/a/b"
            let elsewhere = candidate + "/c"
            try LockCommand.mustRun(["mkdir", "-p", candidate])
            try LockCommand.mustRun(["mv", scenario.sandbox.home, elsewhere])
            let movedApp = elsewhere + "/Applications/" + LockScenario.appID
            #expect(throws: LockError.directoryMissing(
                user: scenario.child.name, appID: LockScenario.appID, lastPath: scenario.app)) {
                try scenario.engine.locate(user: scenario.child.name, appID: LockScenario.appID)
            }
            let located = try scenario.engine.locate(
                user: scenario.child.name, appID: LockScenario.appID, candidates: [candidate])
            #expect(located.path == movedApp)
            #expect(try scenario.unlock().path == movedApp)
        }
    }
}

/// What the journal said each time the engine was about to change an entry.
final class LockObservations: @unchecked Sendable {
    var journal: LockMemoryJournal?
    var user = ""
    private(set) var statesAtChanges: Set<LockState> = []
    private(set) var entryCountsAtChanges: Set<Int> = []

    func note(_ path: String) {
        guard let journal else { return }
        if let record = try? journal.lockRecord(user: user, appID: LockScenario.appID) {
            statesAtChanges.insert(record.state)
        }
        entryCountsAtChanges.insert((try? journal.entries(user: user, appID: LockScenario.appID).count) ?? -1)
    }
}

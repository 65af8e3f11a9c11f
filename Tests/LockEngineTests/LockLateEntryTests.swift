#if canImport(Glibc)
import Glibc
#endif
import LockEngine
import SystemKit
import Synchronization
import TestSupport
import Testing

/// Creates `count` files spread over `directories` folders of the app, as
/// the child would while the lock runs, the first time the engine is about
/// to change something (after the entries were recorded).
final class LateSpray: Sendable {
    private let done = Mutex(false)
    let app: String
    let child: ChildUser
    let count: Int
    let directories: Int

    init(app: String, child: ChildUser, count: Int, directories: Int) {
        self.app = app
        self.child = child
        self.count = count
        self.directories = directories
    }

    var hooks: LockEngineHooks {
        LockEngineHooks { [self] _ in
            guard done.withLock({ let first = !$0; $0 = true; return first }) else { return }
            for index in 0..<count {
                let path = app + "/extra\(index % directories)/late\(index)"
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { continue }
                fchown(fd, child.uid, child.gid)
                close(fd)
            }
        }
    }
}

@Suite("Entries sprayed into an app while it is locked cost batches, not a transaction each, and are bounded",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockLateEntryTests {
    @Test("10,000 late entries are journaled in a few batches, and every one is locked")
    func lateEntriesAreBatched() async throws {
        try await withLockScenario(extraFiles: 16) { scenario in
            let spray = LateSpray(app: scenario.app, child: scenario.child, count: 10_000, directories: 8)
            let engine = LockEngine(journal: scenario.journal, logger: .lockTests, hooks: spray.hooks)
            let report = try engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: scenario.app)
            #expect(report.state == .locked)
            let writes = scenario.journal.entryWrites + scenario.journal.appendWrites
            #expect(writes <= 5, "\(writes) journal writes for 10,000 late entries: one per entry would be quadratic")
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.items.filter { $0.path.contains("/late") }.count == 10_000)
            #expect(locked.unlockedItems().isEmpty)
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(entries.count == locked.items.count, "every late entry was journaled before it was locked")

            let unlock = try engine.unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(unlock.findings.isEmpty, "\(unlock.findings.prefix(3))")
            #expect(try TreeSnapshot.take(scenario.app).items.allSatisfy { !$0.isImmutable })
        }
    }

    @Test("past the limit of late entries the lock is unenforced, and what it did not take is left as it was")
    func lateEntriesAreCapped() async throws {
        try await withLockScenario(extraFiles: 16) { scenario in
            let spray = LateSpray(app: scenario.app, child: scenario.child, count: 300, directories: 8)
            var limits = LockEngine.Limits()
            limits.lateEntries = 100
            limits.lateBatch = 32
            let engine = LockEngine(journal: scenario.journal, logger: .lockTests, hooks: spray.hooks, limits: limits)
            let report = try engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: scenario.app)
            #expect(report.state == .unenforced(
                reason: "more than 100 entries appeared while the lock was being applied; the ones after that were left as they are"))
            let late = try TreeSnapshot.take(scenario.app).items.filter { $0.path.contains("/late") }
            #expect(late.filter(\.isImmutable).count == 100)
            #expect(late.count == 300)
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(entries.filter { $0.relativePath.contains("/late") }.count == 100)
            _ = try engine.unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(try TreeSnapshot.take(scenario.app).items.allSatisfy { !$0.isImmutable })
        }
    }

    @Test("an app with more entries than one lock takes is refused before anything changes")
    func tooManyEntries() async throws {
        try await withLockScenario(extraFiles: 40) { scenario in
            var limits = LockEngine.Limits()
            limits.entries = 20
            let engine = LockEngine(journal: scenario.journal, logger: .lockTests, limits: limits)
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockError.tooManyEntries(limit: 20)) {
                try engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: scenario.app)
            }
            #expect(try TreeSnapshot.take(scenario.app) == before)
            #expect(try scenario.record() == nil)
        }
    }

    @Test("a lock that fails part way is undone: nothing stays immutable, nothing stays recorded")
    func failedLockIsUndone() async throws {
        let changes = Mutex(0)
        // An I/O error on the tenth entry, after nine were made immutable.
        let failing = LockEngineHooks { path in
            let count = changes.withLock { $0 += 1; return $0 }
            if count == 10 { throw LockError.system(path: path, Errno(EIO, operation: "ioctl FS_IOC_SETFLAGS")) }
        }
        try await withLockScenario(hooks: failing) { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockError.self) { try scenario.lock() }
            #expect(changes.withLock { $0 } > 10, "the undo ran through the changes the lock had made")
            #expect(try TreeSnapshot.take(scenario.app) == before, "the partial lock was undone exactly")
            #expect(try scenario.record() == nil)
        }
    }

    @Test("levels that appear late deeper than a walk goes are not taken: the lock says so, and unlocks whole")
    func deepLateTreeIsUnenforced() async throws {
        try await withLockScenario { scenario in
            let deep = DeepSpray(app: scenario.app, child: scenario.child)
            let engine = LockEngine(journal: scenario.journal, logger: .lockTests, hooks: deep.hooks)
            let report = try engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: scenario.app)
            guard case .unenforced(let reason) = report.state else {
                Issue.record("a tree the lock could not take whole was called \(report.state)")
                return
            }
            #expect(reason.contains("nests more than 256 directories deep"), "\(reason)")
            let verify = try engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false)
            #expect(!verify.isClean)
            let unlock = try engine.unlock(user: scenario.child.name, appID: LockScenario.appID)
            #expect(unlock.restoredEntries > 0)
            #expect(try TreeSnapshot.take(scenario.app).items.allSatisfy { !$0.isImmutable }, "unlocked whole")
        }
    }
}
/// Makes a chain of 300 nested directories inside the app the first time
/// the engine is about to change something.
final class DeepSpray: Sendable {
    private let done = Mutex(false)
    let app: String
    let child: ChildUser

    init(app: String, child: ChildUser) {
        self.app = app
        self.child = child
    }

    var hooks: LockEngineHooks {
        LockEngineHooks { [self] _ in
            guard done.withLock({ let first = !$0; $0 = true; return first }) else { return }
            let chain = (0..<300).map { _ in "d" }.joined(separator: "/")
            _ = try? LockCommand.run(["sh", "-c", "mkdir -p '\(app)/\(chain)' && chown -R \(child.uid) '\(app)/d'"])
        }
    }
}

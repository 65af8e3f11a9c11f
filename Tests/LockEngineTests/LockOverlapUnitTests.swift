import TestSupport
import LockEngine
import SystemKit
import Testing

@Suite("One inode, one lock", .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockOverlapUnitTests {
    @Test("a second app ID over a locked directory is refused, naming the first, and changes nothing")
    func secondAppOverOneDirectoryIsRefused() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            #expect(throws: LockError.coveredByAnotherLock(path: "", user: scenario.child.name, appID: LockScenario.appID)) {
                try scenario.engine.lock(user: scenario.child.name, appID: "org.example.Other", directory: scenario.app)
            }
            #expect(try scenario.journal.lockRecord(user: scenario.child.name, appID: "org.example.Other") == nil)
            try scenario.unlock()
            #expect(try TreeSnapshot.take(scenario.app) == before, "the first app's unlock frees everything: nothing was the second's")
        }
    }

    @Test("a file of the child's with a name outside the app is refused; names inside the app are fine")
    func hardLinksOutsideTheAppAreRefused() async throws {
        try await withLockScenario { scenario in
            let file = scenario.sandbox.app(LockAppTree.dataFile)
            #expect(try scenario.child.run(["ln", file, scenario.sandbox.app("second-name")]).succeeded)
            try scenario.lock()
            try scenario.unlock()
            #expect(try scenario.child.run(["ln", file, scenario.sandbox.home + "/outside"]).succeeded)
            // Either of its two names in the app may be the one named.
            do {
                try scenario.lock()
                Issue.record("a file with a name outside the app was locked")
            } catch LockError.linkedOutside(let path, let links, let inside) {
                #expect([LockAppTree.dataFile, "second-name"].contains(path), "\(path)")
                #expect(links == 3 && inside == 2)
            }
            #expect(try scenario.record() == nil)
            #expect(!LockFiles.isImmutable(file))
        }
    }

    @Test("two locks journaled over one directory (before that was refused): the second is never called locked")
    func anOverlapFromBeforeIsNeverCalledLocked() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            let first = try #require(try scenario.record())
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            var second = first
            second.appID = "org.example.Other"
            try scenario.journal.saveEntries(entries, record: second)
            let report = try scenario.engine.verify(user: scenario.child.name, appID: second.appID, repair: true)
            #expect(report.findings.contains { $0.contains("also locked for \(LockScenario.appID)") }, "\(report.findings)")
            guard case .unenforced(let reason) = report.record.state else {
                Issue.record("called \(report.record.state)")
                return
            }
            #expect(reason.hasPrefix("the app directory: also locked for \(LockScenario.appID) of \(scenario.child.name)"), "\(reason)")
        }
    }

    @Test("a flag an administrator set and later lifted, set again by a repair, is the lock's own: its unlock clears it")
    func aFlagTheLockSetAgainIsClearedByItsUnlock() async throws {
        try await withLockScenario { scenario in
            let data = scenario.sandbox.app(LockAppTree.dataFile)
            try LockFiles.chattr("+i", data)
            try scenario.lock()
            try LockFiles.chattr("-i", data)
            let report = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: true)
            #expect(report.repaired)
            #expect(LockFiles.isImmutable(data))
            try scenario.unlock()
            #expect(!LockFiles.isImmutable(data), "the administrator lifted it; the lock's own flag went with the lock")
        }
    }
}

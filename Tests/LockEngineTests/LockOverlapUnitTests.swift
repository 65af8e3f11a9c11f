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
}

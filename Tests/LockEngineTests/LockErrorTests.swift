import TestSupport
import LockEngine
import Testing

@Suite("The lock engine refuses what it must, with the exact error",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockErrorTests {
    @Test("the app directory itself may not be a symbolic link")
    func appDirectorySymlink() async throws {
        try await withLockScenario { (scenario) throws in
            let alias = scenario.sandbox.applications + "/alias"
            try LockFiles.symlink(scenario.app, at: alias, owner: scenario.child)
            #expect(throws: LockError.symbolicLinkInPath(alias)) {
                try scenario.engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: alias)
            }
            #expect(try scenario.record() == nil)
        }
    }

    @Test("no ancestor of the app directory may be a symbolic link")
    func ancestorSymlink() async throws {
        try await withLockScenario { (scenario) throws in
            let alias = scenario.sandbox.home + "/Alias"
            try LockFiles.symlink(scenario.sandbox.applications, at: alias, owner: scenario.child)
            #expect(throws: LockError.symbolicLinkInPath(alias)) {
                try scenario.engine.lock(
                    user: scenario.child.name, appID: LockScenario.appID, directory: alias + "/" + LockScenario.appID)
            }
        }
    }

    @Test("paths that are relative, climb with '..', are missing or are files are refused")
    func badPaths() async throws {
        try await withLockScenario { (scenario) throws in
            let user = scenario.child.name
            #expect(throws: LockError.invalidPath("relative/app")) {
                try scenario.engine.lock(user: user, appID: LockScenario.appID, directory: "relative/app")
            }
            let climbing = scenario.sandbox.applications + "/../Applications/" + LockScenario.appID
            #expect(throws: LockError.invalidPath(climbing)) {
                try scenario.engine.lock(user: user, appID: LockScenario.appID, directory: climbing)
            }
            #expect(throws: LockError.invalidPath("/")) {
                try scenario.engine.lock(user: user, appID: LockScenario.appID, directory: "/")
            }
            let missing = scenario.sandbox.applications + "/missing"
            #expect(throws: LockError.directoryNotFound(missing)) {
                try scenario.engine.lock(user: user, appID: LockScenario.appID, directory: missing)
            }
            let file = scenario.sandbox.app("README")
            #expect(throws: LockError.notADirectory(file)) {
                try scenario.engine.lock(user: user, appID: LockScenario.appID, directory: file)
            }
            #expect(try scenario.record() == nil)
        }
    }

    @Test("an unknown user is refused before anything changes")
    func unknownUser() async throws {
        try await withLockScenario { (scenario) throws in
            let before = try TreeSnapshot.take(scenario.app)
            #expect(throws: LockError.unknownUser("fctest_nobody_here")) {
                try scenario.engine.lock(user: "fctest_nobody_here", appID: LockScenario.appID, directory: scenario.app)
            }
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("unlock, verify and locate of an app that is not locked say so")
    func notLocked() async throws {
        try await withLockScenario { (scenario) throws in
            let error = LockError.notLocked(user: scenario.child.name, appID: LockScenario.appID)
            #expect(throws: error) { try scenario.unlock() }
            #expect(throws: error) {
                try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: true)
            }
            #expect(throws: error) { try scenario.engine.locate(user: scenario.child.name, appID: LockScenario.appID) }
            #expect(try scenario.engine.status(user: scenario.child.name, appID: LockScenario.appID) == nil)
        }
    }

    @Test("the same app cannot be locked at a second directory")
    func lockedElsewhere() async throws {
        try await withLockScenario { (scenario) throws in
            try scenario.lock()
            let other = scenario.sandbox.applications + "/other"
            try LockAppTree.make(at: other, owner: scenario.child)
            #expect(throws: LockError.lockedElsewhere(user: scenario.child.name, appID: LockScenario.appID, path: scenario.app)) {
                try scenario.engine.lock(user: scenario.child.name, appID: LockScenario.appID, directory: other)
            }
            #expect(try TreeSnapshot.take(other).items.allSatisfy { $0.uid == scenario.child.uid })
        }
    }

    @Test("a locked directory that cannot be found is reported, and the unlock can be finished later")
    func directoryMissing() async throws {
        try await withLockScenario { (scenario) throws in
            try scenario.lock()
            // An administrator moves it far away.
            let away = scenario.sandbox.root + "/a/b/c/d/e"
            try LockCommand.mustRun(["mkdir", "-p", away])
            try LockFiles.chattr("-i", scenario.app)
            try LockCommand.mustRun(["mv", scenario.app, away + "/app"])
            #expect(throws: LockError.directoryMissing(user: scenario.child.name, appID: LockScenario.appID, lastPath: scenario.app)) {
                try scenario.unlock()
            }
            #expect(try scenario.record()?.state == .unlocking)
            let status = try scenario.engine.status(user: scenario.child.name, appID: LockScenario.appID)
            #expect(status?.path == scenario.app, "the last known path")
            let report = try scenario.engine.unlock(
                user: scenario.child.name, appID: LockScenario.appID, candidates: [scenario.sandbox.root + "/a/b/c"])
            #expect(report.path == away + "/app")
            #expect(try scenario.record() == nil)
        }
    }
}

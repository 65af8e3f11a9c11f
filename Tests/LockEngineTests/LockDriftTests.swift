import TestSupport
import LockEngine
import Testing

@Suite("verify finds drift and repairs it; unlock reports what an administrator changed",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockDriftTests {
    @Test("a fresh lock verifies clean")
    func freshLockIsClean() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            let report = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false)
            #expect(report.isClean, "\(report.findings)")
            #expect(!report.repaired)
        }
    }

    @Test("a changed mode and a cleared flag are found, then repaired")
    func modeAndFlagDrift() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            let data = scenario.sandbox.app(LockAppTree.dataFile)
            try LockFiles.chattr("-i", data)
            try LockCommand.mustRun(["chmod", "0666", data])

            let found = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false)
            #expect(found.findings.count == 2, "\(found.findings)")
            #expect(found.findings.allSatisfy { $0.hasPrefix(LockAppTree.dataFile + ":") })
            #expect(found.findings.contains { $0.contains("mode 666") })
            #expect(found.findings.contains { $0.contains("not immutable") })
            #expect(!found.repaired)
            #expect(!LockFiles.isImmutable(data), "verify without repair changes nothing")

            let repaired = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: true)
            #expect(repaired.repaired)
            #expect(repaired.record.state == .locked)
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems().isEmpty)
            #expect(try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false).isClean)

            try scenario.unlock()
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("an unrecorded entry is reported, and repair records and locks it")
    func unrecordedEntry() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            try LockFiles.chattr("-i", scenario.app)
            try LockFiles.write(scenario.sandbox.app("added-by-admin"), "x", 0o644)
            try LockFiles.chattr("+i", scenario.app)

            let found = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false)
            #expect(found.findings == ["added-by-admin: not recorded by the lock"])
            _ = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: true)
            #expect(LockFiles.isImmutable(scenario.sandbox.app("added-by-admin")))
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(entries.contains { $0.relativePath == "added-by-admin" && $0.uid == 0 && $0.mode == 0o644 })
            #expect(try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false).isClean)

            try scenario.unlock()
            let after = try LockFiles.status(scenario.sandbox.app("added-by-admin"))
            #expect(after.st_mode & 0o7777 == 0o644, "restored to what was recorded")
        }
    }

    @Test("unlock leaves an entry an administrator changed as it is, and says so")
    func unlockReportsAdminChange() async throws {
        try await withLockScenario { scenario in
            let before = try TreeSnapshot.take(scenario.app)
            try scenario.lock()
            let data = scenario.sandbox.app(LockAppTree.dataFile)
            try LockFiles.chattr("-i", data)
            try LockCommand.mustRun(["chown", "4242:4242", data])

            let report = try scenario.unlock()
            #expect(report.findings.count == 1, "\(report.findings)")
            #expect(report.findings.first?.hasPrefix(LockAppTree.dataFile + ": changed since the lock") == true)
            let status = try LockFiles.status(data)
            #expect(status.st_uid == 4242 && status.st_gid == 4242, "not clobbered")
            var after = try TreeSnapshot.take(scenario.app)
            after.items.removeAll { $0.path == LockAppTree.dataFile }
            var expected = before
            expected.items.removeAll { $0.path == LockAppTree.dataFile }
            #expect(after == expected, "everything else is restored")
        }
    }

    @Test("unlock skips an entry whose inode changed, and says so")
    func unlockReportsReplacedEntry() async throws {
        try await withLockScenario { scenario in
            try scenario.lock()
            let data = scenario.sandbox.app(LockAppTree.dataFile)
            try LockFiles.chattr("-i", scenario.sandbox.app("lib"))
            try LockFiles.chattr("-i", data)
            // Moved away, not deleted: ext4 would give the new file the freed inode number.
            try LockCommand.mustRun(["mv", data, scenario.sandbox.root + "/old-data"])
            try LockFiles.write(data, "replaced", 0o600)
            try LockFiles.chattr("+i", data)

            let report = try scenario.unlock()
            #expect(report.findings == [
                LockAppTree.dataFile + ": replaced since the lock (another file now has this name); left as it is",
            ])
            #expect(LockFiles.isImmutable(data), "the replacement is not touched")
            #expect(try LockFiles.status(data).st_uid == 0)
        }
    }
}

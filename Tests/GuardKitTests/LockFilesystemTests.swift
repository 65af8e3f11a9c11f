import TestSupport
import GuardKit
import Testing

/// Whether this process may mount filesystems (CAP_SYS_ADMIN in the initial namespace).
let lockTestsCanMount: Bool = {
    guard lockTestsCanRun else { return false }
    return (try? LockCommand.run(["sh", "-c", "d=$(mktemp -d) && mount -t tmpfs none \"$d\" && umount \"$d\"; s=$?; rmdir \"$d\"; exit $s"]))?.succeeded ?? false
}()

@Suite("Filesystems that cannot hold a lock are reported, never called locked",
       .enabled(if: lockTestsCanMount, "needs root allowed to mount tmpfs and ramfs"))
struct LockFilesystemTests {
    @Test("ramfs has no immutable attribute: the lock is unenforced, and the child can indeed move the app")
    func ramfsIsUnenforced() async throws {
        try await withLockScenario(buildApp: false) { scenario in
            try scenario.sandbox.mount("ramfs", at: scenario.sandbox.applications)
            try LockAppTree.make(in: scenario.sandbox)
            let before = try TreeSnapshot.take(scenario.app)

            let report = try scenario.lock()
            guard case .unenforced(let reason) = report.state else {
                Issue.record("expected unenforced, got \(report.state)")
                return
            }
            #expect(reason.hasPrefix("filesystem ramfs does not support the immutable attribute"), "\(reason)")
            #expect(try scenario.record()?.state == report.state)
            // Contents are still root's and read-only, but the directory itself
            // can be renamed away: exactly why this is not "locked".
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems(expectImmutable: false).isEmpty)
            #expect(!(try scenario.child.run(["rm", "-f", scenario.sandbox.app(LockAppTree.dataFile)]).succeeded))
            let moved = scenario.sandbox.applications + "/Moved"
            #expect(try scenario.child.run(["mv", scenario.app, moved]).succeeded)

            let unlock = try scenario.unlock()
            #expect(unlock.path == moved, "found again by inode")
            #expect(try TreeSnapshot.take(moved) == before)
        }
    }

    @Test("tmpfs: the engine reports what the kernel's tmpfs really supports")
    func tmpfsIsTruthful() async throws {
        try await withLockScenario(buildApp: false) { scenario in
            try scenario.sandbox.mount("tmpfs", at: scenario.sandbox.applications)
            let probe = scenario.sandbox.applications + "/probe"
            try LockFiles.write(probe, "", 0o644)
            let supportsImmutable = (try LockCommand.run(["chattr", "+i", probe])).succeeded
            _ = try LockCommand.run(["chattr", "-i", probe])
            try LockCommand.mustRun(["rm", "-f", probe])
            try LockAppTree.make(in: scenario.sandbox)
            let before = try TreeSnapshot.take(scenario.app)

            let report = try scenario.lock()
            if supportsImmutable {
                #expect(report.state == .locked)
                #expect(try TreeSnapshot.take(scenario.app).unlockedItems().isEmpty)
                #expect(!(try scenario.child.run(["mv", scenario.app, scenario.sandbox.applications + "/Moved"]).succeeded))
            } else {
                guard case .unenforced(let reason) = report.state else {
                    Issue.record("expected unenforced, got \(report.state)")
                    return
                }
                #expect(reason.hasPrefix("filesystem tmpfs does not support the immutable attribute"))
            }
            try scenario.unlock()
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("a filesystem mounted inside the app is not crossed, and is reported")
    func mountInsideIsSkipped() async throws {
        try await withLockScenario { scenario in
            let mountPoint = scenario.sandbox.app("mnt")
            try LockFiles.mkdir(mountPoint, 0o755, owner: scenario.child)
            try scenario.sandbox.mount("tmpfs", at: mountPoint)
            try LockFiles.write(mountPoint + "/inside", "x", 0o644, owner: scenario.child)
            let mounted = try TreeSnapshot.take(mountPoint)

            let report = try scenario.lock()
            #expect(report.state == .locked)
            #expect(report.findings == ["mnt: on another filesystem (a mount point); left unlocked"])
            #expect(try TreeSnapshot.take(mountPoint) == mounted, "nothing on the other filesystem changed")
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(!entries.contains { $0.relativePath.hasPrefix("mnt") })
            let unlock = try scenario.unlock()
            #expect(try TreeSnapshot.take(mountPoint) == mounted)
            #expect(unlock.findings == ["mnt: not recorded by the lock; left as it is"])
        }
    }
}

@Suite("Entries root may not change make the lock unenforced, with the reason",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockPermissionTests {
    @Test("an app directory whose owner root cannot change (as on root-squashed NFS) is unenforced, and nothing changes")
    func rootCannotChown() async throws {
        try await withLockScenario { scenario in
            // The append-only flag refuses chown to root, as root squashing does.
            try LockFiles.chattr("+a", scenario.app)
            let before = try TreeSnapshot.take(scenario.app)
            let report = try scenario.lock()
            guard case .unenforced(let reason) = report.state else {
                Issue.record("expected unenforced, got \(report.state)")
                return
            }
            #expect(reason.hasPrefix("root may not change the owner of the app directory on filesystem ext2/3/4"), "\(reason)")
            #expect(reason.contains("Operation not permitted"))
            #expect(try TreeSnapshot.take(scenario.app) == before)
            try scenario.unlock()
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }

    @Test("one entry that cannot be locked makes the whole lock unenforced, naming it")
    func entryCannotBeLocked() async throws {
        try await withLockScenario { scenario in
            try LockFiles.chattr("+a", scenario.sandbox.app(LockAppTree.dataFile))
            let before = try TreeSnapshot.take(scenario.app)
            let report = try scenario.lock()
            #expect(report.state == .unenforced(
                reason: LockAppTree.dataFile + ": could not be locked: fchown: Operation not permitted"))
            let locked = try TreeSnapshot.take(scenario.app)
            #expect(locked.unlockedItems(exempt: [LockAppTree.dataFile]).isEmpty, "everything else is locked")
            let unlock = try scenario.unlock()
            #expect(unlock.findings.isEmpty, "\(unlock.findings)")
            #expect(try TreeSnapshot.take(scenario.app) == before)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport
import LockEngine
import Testing

/// Whether this process may mount filesystems (CAP_SYS_ADMIN in the initial namespace).
let lockTestsCanMount: Bool = {
    guard lockTestsCanRun else { return false }
    return (try? LockCommand.run(["sh", "-c", "d=$(mktemp -d) && mount -t tmpfs none \"$d\" && umount \"$d\"; s=$?; rmdir \"$d\"; exit $s"]))?.succeeded ?? false
}()

/// Whether loop-mounted images of `type` can be made here (`mkfs.TYPE` and loop devices).
func canMountImage(_ type: String) -> Bool {
    guard lockTestsCanMount, (try? LockCommand.run(["sh", "-c", "command -v mkfs.\(type)"]))?.succeeded == true else { return false }
    return FileManager.default.fileExists(atPath: "/dev/loop-control")
}

@Suite("Filesystems that cannot hold a lock are reported, never called locked",
       .enabled(if: lockTestsCanMount, "needs root allowed to mount tmpfs and ramfs"))
struct LockFilesystemTests {
    @Test("ramfs has no immutable attribute: the lock is unenforced, changes nothing, and the child can indeed move the app")
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
            #expect(try TreeSnapshot.take(scenario.app) == before, "nothing can be locked there, so nothing changed")
            let moved = scenario.sandbox.applications + "/Moved"
            #expect(try scenario.child.run(["mv", scenario.app, moved]).succeeded)

            let unlock = try scenario.unlock()
            #expect(unlock.path == moved, "found again by inode")
            #expect(try TreeSnapshot.take(moved) == before)
        }
    }

    @Test("tmpfs holds the immutable attribute on this kernel: the lock is a lock there")
    func tmpfsLocks() async throws {
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

    @Test("a filesystem mounted inside the app is not crossed, and makes the lock unenforced")
    func mountInsideIsUnenforced() async throws {
        try await withLockScenario { scenario in
            let mountPoint = scenario.sandbox.app("mnt")
            try LockFiles.mkdir(mountPoint, 0o755, owner: scenario.child)
            try scenario.sandbox.mount("tmpfs", at: mountPoint)
            try LockFiles.write(mountPoint + "/inside", "x", 0o644, owner: scenario.child)
            let mounted = try TreeSnapshot.take(mountPoint)

            let report = try scenario.lock()
            #expect(report.state == .unenforced(
                reason: "mnt: another filesystem is mounted there, and the lock does not cross into it"))
            #expect(try TreeSnapshot.take(mountPoint) == mounted, "nothing on the other filesystem changed")
            #expect(try scenario.child.run(["rm", mountPoint + "/inside"]).succeeded, "which is why it is not a lock")
            let entries = try scenario.journal.entries(user: scenario.child.name, appID: LockScenario.appID)
            #expect(!entries.contains { $0.relativePath.hasPrefix("mnt") })
            let unlock = try scenario.unlock()
            #expect(unlock.findings == ["mnt: not recorded by the lock; left as it is"])
        }
    }
}

@Suite("A writer that opened a file before the lock keeps it unenforced, on every filesystem",
       .enabled(if: lockTestsCanMount, "needs root allowed to mount filesystems"))
struct LockWriterTests {
    static let filesystems = ["ext4", "xfs", "btrfs", "tmpfs"]

    @Test("a descriptor the child opened for writing before the lock: unenforced, naming it, until it is closed",
          arguments: filesystems)
    func descriptorOpenBefore(_ filesystem: String) async throws {
        try await withWriterScenario(filesystem) { scenario in
            let target = scenario.sandbox.app(LockAppTree.dataFile)
            let writer = try scenario.child.start(["sh", "-c", "exec 3<>'\(target)'; exec sleep 60"])
            defer { LockCommand.stop(writer) }
            try waitForWriter(pid: writer.processIdentifier, path: target)

            let report = try scenario.lock()
            guard case .unenforced(let reason) = report.state else {
                Issue.record("\(filesystem): a file that can still be written was called \(report.state)")
                return
            }
            #expect(reason.hasPrefix("\(LockAppTree.dataFile): open for writing by process "), "\(reason)")
            #expect(try TreeSnapshot.take(scenario.app).unlockedItems().isEmpty, "everything else is locked all the same")

            LockCommand.stop(writer)
            let verified = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: true)
            #expect(verified.repaired)
            #expect(try scenario.record()?.state == .locked, "with the writer gone, the lock holds")
            let clean = try scenario.engine.verify(user: scenario.child.name, appID: LockScenario.appID, repair: false)
            #expect(clean.isClean, "\(clean.findings)")
        }
    }

    @Test("a shared writable mapping whose descriptor was closed still counts as a writer", arguments: filesystems)
    func mappingOpenBefore(_ filesystem: String) async throws {
        try await withWriterScenario(filesystem) { scenario in
            let target = scenario.sandbox.app(LockAppTree.dataFile)
            let script = """
                import mmap, os, time
                fd = os.open('\(target)', os.O_RDWR)
                m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
                os.close(fd)
                open('\(scenario.sandbox.home)/mapped', 'w').close()
                time.sleep(60)
                """
            try LockCommand.mustRun(["chmod", "0777", scenario.sandbox.home])
            let writer = try scenario.child.start(["/usr/bin/python3", "-c", script])
            defer { LockCommand.stop(writer) }
            for _ in 0..<200 where !LockFiles.exists(scenario.sandbox.home + "/mapped") { usleep(25_000) }
            #expect(LockFiles.exists(scenario.sandbox.home + "/mapped"), "the writer never mapped the file")

            let report = try scenario.lock()
            guard case .unenforced(let reason) = report.state else {
                Issue.record("\(filesystem): a mapped file was called \(report.state)")
                return
            }
            #expect(reason.contains("open for writing by process \(writer.processIdentifier)"), "\(reason)")
        }
    }
}

/// A lock scenario whose Applications folder is a fresh `filesystem`: an
/// image loop-mounted for ext4, XFS and btrfs, a tmpfs for tmpfs.
private func withWriterScenario(_ filesystem: String, _ body: (LockScenario) throws -> Void) async throws {
    if filesystem != "tmpfs", !canMountImage(filesystem) {
        Issue.record("cannot make a \(filesystem) image here (mkfs.\(filesystem) or loop devices missing)")
        return
    }
    try await withLockScenario(buildApp: false) { scenario in
        if filesystem == "tmpfs" {
            try scenario.sandbox.mount("tmpfs", at: scenario.sandbox.applications)
        } else {
            try scenario.sandbox.mountImage(filesystem, at: scenario.sandbox.applications)
        }
        try LockAppTree.make(in: scenario.sandbox)
        try body(scenario)
    }
}

/// Waits until process `pid` has `path` open.
private func waitForWriter(pid: Int32, path: String) throws {
    for _ in 0..<400 {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        for name in descriptors where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)")) == path {
            return
        }
        usleep(25_000)
    }
    throw LockTestError("process \(pid) never opened \(path)")
}

@Suite("Entries the lock may not take make it unenforced, with the reason",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockPermissionTests {
    @Test("a file of another user inside the app is left exactly as it is, and the lock says why it does not hold")
    func anotherUsersFile() async throws {
        try await withLockScenario { scenario in
            try withChildUser { other in
                let foreign = scenario.sandbox.app("lib/theirs.txt")
                try LockFiles.write(foreign, "not the child's\n", 0o666)
                guard lchown(foreign, other.uid, other.gid) == 0 else { throw LockTestError("lchown: errno \(errno)") }
                let report = try scenario.lock()
                #expect(report.state == .unenforced(reason: "lib/theirs.txt: belongs to uid \(other.uid), not to the child: "
                    + "the lock does not change another user's files"))
                #expect(!LockFiles.isImmutable(foreign), "another user's file is never changed")
                #expect(try TreeSnapshot.take(scenario.app).unlockedItems(exempt: ["lib/theirs.txt"]).isEmpty)
                try scenario.unlock()
            }
        }
    }

    @Test("a root file with several links is left alone: it may be a file outside the app")
    func rootsLinkedFile() async throws {
        try await withLockScenario { scenario in
            let outside = scenario.sandbox.root + "/outside.txt"
            try LockFiles.write(outside, "root's\n", 0o644)
            try LockCommand.mustRun(["ln", outside, scenario.sandbox.app("lib/linked.txt")])
            let report = try scenario.lock()
            guard case .unenforced(let reason) = report.state else {
                Issue.record("expected unenforced, got \(report.state)")
                return
            }
            #expect(reason.hasPrefix("lib/linked.txt: has 2 hard links and belongs to root"), "\(reason)")
            #expect(!LockFiles.isImmutable(outside), "the file outside the app never changed")
            try scenario.unlock()
        }
    }
}

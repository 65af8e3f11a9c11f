#if canImport(Glibc)
import TestSupport
import Glibc
#endif
import Foundation
import LockEngine
import Testing

/// What must stay exactly as it is about a file outside the app: the ctime
/// catches even a chown or chmod to the values it already had.
struct LockOutsideState: Equatable {
    var uid: UInt32
    var gid: UInt32
    var mode: UInt32
    var changeTime: timespec
    var flags: CInt
    var contentHash: UInt64

    static func take(_ path: String) throws -> LockOutsideState {
        let status = try LockFiles.status(path)
        let item = try #require(try TreeSnapshot.take(path)[""])
        return LockOutsideState(uid: status.st_uid, gid: status.st_gid, mode: UInt32(status.st_mode) & 0o7777,
                                changeTime: status.st_ctim, flags: LockFiles.flags(path) ?? -1,
                                contentHash: item.contentHash)
    }

    static func == (a: LockOutsideState, b: LockOutsideState) -> Bool {
        a.uid == b.uid && a.gid == b.gid && a.mode == b.mode && a.flags == b.flags && a.contentHash == b.contentHash
            && a.changeTime.tv_sec == b.changeTime.tv_sec && a.changeTime.tv_nsec == b.changeTime.tv_nsec
    }
}

@Suite("A child racing the engine with symlinks and hard links never makes root touch anything outside",
       .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockRaceTests {
    /// Swaps entries between regular files and links to root's files outside,
    /// and directories and links to root's directories outside, as fast as perl can.
    static let swapper = #"""
        my ($file, $dir, @places) = @ARGV;
        while (1) {
            for my $p (@places) {
                symlink($file, "$p/.s1"); rename("$p/.s1", "$p/swap");
                if (open(my $f, ">", "$p/.s2")) { close($f); } rename("$p/.s2", "$p/swap");
                unlink("$p/swapdir"); rmdir("$p/swapdir"); symlink($dir, "$p/swapdir");
                unlink("$p/swapdir"); mkdir("$p/swapdir");
                symlink($dir, "$p/.s3"); rename("$p/.s3", "$p/swap");
            }
        }
        """#

    @Test("50 locks and unlocks under a swapping child leave root's outside files untouched")
    func swappingChild() async throws {
        try await withLockScenario(buildApp: false) { scenario in
            let outside = scenario.sandbox.root + "/outside"
            try LockFiles.mkdir(outside, 0o755)
            let secretFile = outside + "/secret"
            let secretDirectory = outside + "/private"
            try LockFiles.write(secretFile, "secret", 0o600)
            try LockFiles.mkdir(secretDirectory, 0o700)
            let fileBefore = try LockOutsideState.take(secretFile)
            let directoryBefore = try LockOutsideState.take(secretDirectory)

            for round in 0..<50 {
                let app = scenario.sandbox.applications + "/race\(round)"
                try LockAppTree.make(at: app, owner: scenario.child, extraFiles: 150)
                let places = [app, app + "/lib/nested", app + "/extra7"]
                let child = try scenario.child.start(["perl", "-e", Self.swapper, secretFile, secretDirectory] + places)
                usleep(useconds_t(5_000 + (round % 5) * 10_000))
                let report: LockReport
                do {
                    report = try scenario.engine.lock(user: scenario.child.name, appID: "race\(round)", directory: app)
                } catch {
                    LockCommand.stop(child)
                    throw error
                }
                LockCommand.stop(child)

                // The child leaves links to root's files in its app, and files
                // it was writing as the lock came: the lock holds for everything
                // else, and says what it cannot vouch for.
                if case .unenforced(let reason) = report.state {
                    #expect(reason.contains("outside the app; what it points to is not protected")
                            || reason.contains(": open for writing by "), "round \(round): \(reason)")
                }
                #expect(try LockOutsideState.take(secretFile) == fileBefore, "round \(round): outside file touched")
                #expect(try LockOutsideState.take(secretDirectory) == directoryBefore, "round \(round): outside directory touched")
                let locked = try TreeSnapshot.take(app)
                #expect(locked.unlockedItems().isEmpty, "round \(round): \(locked.unlockedItems())")

                let unlock = try scenario.engine.unlock(user: scenario.child.name, appID: "race\(round)")
                #expect(unlock.findings.isEmpty, "round \(round): \(unlock.findings)")
                #expect(try LockOutsideState.take(secretFile) == fileBefore)
                #expect(try LockOutsideState.take(secretDirectory) == directoryBefore)
                let restored = try TreeSnapshot.take(app)
                #expect(restored.items.allSatisfy { $0.uid == scenario.child.uid && !$0.isImmutable },
                        "round \(round): everything is the child's again")
                try LockCommand.mustRun(["rm", "-rf", app])
            }
        }
    }

    @Test("a hard link to a shared root file outside the app is left alone, and makes the lock unenforced")
    func foreignHardLinkIsLeftAlone() async throws {
        try await withLockScenario { scenario in
            // A file the child may write (and so, with protected_hardlinks, link).
            let shared = scenario.sandbox.root + "/shared"
            try LockFiles.write(shared, "shared", 0o666)
            let linked = scenario.sandbox.app("lib/shared")
            #expect(try scenario.child.run(["ln", shared, linked]).succeeded)
            let before = try LockOutsideState.take(shared)

            let report = try scenario.lock()
            #expect(report.state == .unenforced(reason: "lib/shared: has 2 hard links and belongs to root: "
                + "it may be a file outside the app, so the lock does not change it"))
            #expect(report.findings.count == 1, "\(report.findings)")
            #expect(try LockOutsideState.take(shared) == before)
            #expect(!(try scenario.child.run(["rm", "-f", linked]).succeeded), "its directory still holds it")
            try scenario.unlock()
            #expect(try LockOutsideState.take(shared) == before)
        }
    }

    @Test("with protected_hardlinks, the child cannot link root's private file into its app at all")
    func privateFileCannotBeLinked() async throws {
        try await withLockScenario { scenario in
            let secret = scenario.sandbox.root + "/secret"
            try LockFiles.write(secret, "secret", 0o600)
            #expect(!(try scenario.child.run(["ln", secret, scenario.sandbox.app("stolen")]).succeeded))
        }
    }
}

import Foundation
import Testing
import TestSupport

/// Whether `mkfs.TYPE` and loop devices are here to make a test filesystem.
func canMakeFilesystem(_ type: String) -> Bool {
    type == "tmpfs" || (FileManager.default.isExecutableFile(atPath: "/usr/sbin/mkfs.\(type)")
        && FileManager.default.fileExists(atPath: "/dev/loop-control"))
}

/// Every "locked" is a fact: the child, as a real unprivileged process
/// against the real Guard, builds apps the lock cannot take whole, and the
/// Guard says so instead of calling them locked.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct LockAttackEndToEndTests {
    @Test func anAppTooDeepToLockIsNotApprovedAndOtherLocksStillVerify() async throws {
        try await withGuard { guardd in
            let second = try guardd.installDemo(for: guardd.child, appID: "org.example.Second")
            try await guardd.requestApproved(executable: second + "/familycontrols-demo").requireSuccess()
            let chain = (0..<300).map { _ in "d" }.joined(separator: "/")
            try await guardd.shell("mkdir -p '\(guardd.appDirectory)/\(chain)'").requireSuccess()

            let result = try await guardd.requestApproved()
            #expect(result.status == 1)
            #expect(result.standardError.contains("could not be locked, so it was not approved"), "\(result.standardError)")
            #expect(result.standardError.contains("nests more than 256 directories deep"))
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").succeeded, "nothing of it was locked")
            let verify = try await guardd.familyctl(["locks", "verify"])
            #expect(verify.status == 0, "the other app's lock still verifies: \(verify.standardError)")
        }
    }

    @Test(arguments: ["ext4", "xfs", "btrfs", "tmpfs"])
    func aWriterOpenedBeforeTheLockMakesItUnenforcedUntilItIsGone(_ filesystem: String) async throws {
        guard canMakeFilesystem(filesystem) else {
            Issue.record("cannot make a \(filesystem) filesystem here (mkfs.\(filesystem) or loop devices missing)")
            return
        }
        try await withGuard { guardd in
            let applications = "\(guardd.homesRoot)/\(guardd.child.name)/Applications"
            try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
            try await mountFilesystem(filesystem, at: applications, image: "\(guardd.directory)/\(filesystem).img")
            defer { _ = try? run("/usr/bin/umount", ["-l", applications]) as ProcessResult }
            let app = try guardd.installDemo(for: guardd.child, appID: "org.example.Disk", inHome: true)
            try await guardd.shell("echo original > '\(app)/data.txt'").requireSuccess()

            // The child holds the app's data file open for writing, then asks.
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            writer.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                "/bin/sh", "-c", "exec 3<>'\(app)/data.txt'; exec sleep 60"]
            try writer.run()
            defer { kill(writer) }
            try await waitUntil(timeout: 60) {
                ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(writer.processIdentifier)/fd")) ?? []).contains("3")
            }

            let result = try await guardd.requestApproved(executable: app + "/familycontrols-demo")
            #expect(result.status == 0, "\(result.standardError)")
            let lock = try await guardd.lock(of: "org.example.Disk") ?? ""
            #expect(lock.hasPrefix("unenforced: data.txt: open for writing by process \(writer.processIdentifier)"),
                    "\(filesystem): a file that can still be written was called \(lock)")
            let verify = try await guardd.familyctl(["locks", "verify"])
            #expect(verify.status == 1, "verify must not call it whole")

            kill(writer)
            let repaired = try await guardd.familyctl(["locks", "verify"])
            #expect(repaired.status == 1, "found and repaired: \(repaired.standardError)")
            #expect(try await guardd.authorization(appID: "org.example.Disk")?["lock"]?.stringValue == "locked")
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
            #expect(try await guardd.shell("echo changed > '\(app)/data.txt'").status != 0)
            #expect(try String(contentsOfFile: "\(app)/data.txt", encoding: .utf8) == "original\n")
            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", "org.example.Disk"]).requireSuccess()
        }
    }

    @Test func linksOutAndFilesThatAreNotTheChildsAreNeverCalledLocked() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            let outside = "\(guardd.appsRoot)/\(guardd.child.name)/outside"
            try await guardd.shell("mkdir '\(outside)' && echo mine > '\(outside)/x' && ln -s ../outside '\(app)/data'")
                .requireSuccess()
            try await guardd.requestApproved().requireSuccess()
            let linked = try await guardd.lock() ?? ""
            #expect(linked == "unenforced: data: it leads above the app directory; what it points to is not protected", "\(linked)")
            #expect(try await guardd.shell("echo changed > '\(app)/data/x'").succeeded, "which is why: the child can change it")
            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID]).requireSuccess()

            // A world-writable file of another user, hard-linked in by the child.
            let shared = "\(guardd.directory)/shared.txt"
            try "shared\n".write(toFile: shared, atomically: false, encoding: .utf8)
            chmod(shared, 0o666)
            chown(shared, guardd.adult.uid, guardd.adult.gid)
            try await guardd.shell("rm '\(app)/data' && ln '\(shared)' '\(app)/shared.txt'").requireSuccess()
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let foreign = try await guardd.lock() ?? ""
            #expect(foreign.hasPrefix("unenforced: shared.txt: belongs to uid \(guardd.adult.uid), not to the child"), "\(foreign)")
            #expect((inodeFlags(shared) ?? 0) & 0x10 == 0, "another user's file is never changed")
        }
    }

    @Test func oneLockThatCannotBeFoundStopsNeitherReconcileNorVerifyForTheOthers() async throws {
        try await withGuard { guardd in
            // Sorted first, so it is checked first.
            let broken = try guardd.installDemo(for: guardd.child, appID: "org.example.Broken")
            try await guardd.requestApproved(executable: broken + "/familycontrols-demo").requireSuccess()
            try await guardd.requestApproved().requireSuccess()
            guardd.stop()
            try await sh("chattr -R -i '\(broken)' && mkdir -p '\(guardd.directory)/gone' && mv '\(broken)' '\(guardd.directory)/gone/'")
                .requireSuccess()
            try await sh("chattr -i '\(guardd.appExecutable)'").requireSuccess()

            try await guardd.start()
            try await guardd.waitUntilReconciled()
            #expect(try TreeSnapshot.take(guardd.appDirectory).unlockedItems().isEmpty, "the other app was repaired")
            #expect(guardd.log.contains("org.example.Broken for \(guardd.child.name): the locked directory"), "\(guardd.log)")
            let verify = try await guardd.familyctl(["locks", "verify"])
            #expect(verify.status == 1)
            #expect(verify.standardOutput.contains("org.example.Broken for \(guardd.child.name): the locked directory"),
                    "\(verify.standardOutput)")
            #expect(!verify.standardError.contains("verification failed"))
        }
    }

    @Test func theGuardServesBeforeItReconciles() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            guardd.stop()
            try await guardd.start()
            try await guardd.waitUntilReconciled()
            let lines = guardd.log.split(separator: "\n")
            let serving = try #require(lines.lastIndex { $0.contains(" serving ") })
            let reconciled = try #require(lines.lastIndex { $0.contains(" reconcile: ") })
            #expect(serving < reconciled, "nobody is answered until every lock is checked")
        }
    }

    @Test func aChildSprayingFilesIntoItsAppWhileItIsLockedGetsItLockedSoon() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            try await guardd.shell("for d in $(seq 1 20); do mkdir '\(app)/d'$d; done").requireSuccess()
            let sprayer = Process()
            sprayer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            sprayer.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                 "/usr/bin/perl", "-e",
                                 "my $i = 0; while (1) { for my $d (1..20) { open(my $f, '>', \"\(app)/d$d/s\" . $i++) && close($f); } }"]
            try sprayer.run()
            defer { kill(sprayer) }
            let started = ContinuousClock.now
            let result = try await guardd.requestApproved()
            #expect(result.status == 0, "\(result.standardError)")
            #expect(ContinuousClock.now - started < .seconds(60), "the lock ran for minutes")
            kill(sprayer)
            let lock = try await guardd.lock() ?? ""
            #expect(lock == "locked" || lock.hasPrefix("unenforced: "), "\(lock)")
            let snapshot = try TreeSnapshot.take(app)
            if lock == "locked" { #expect(snapshot.unlockedItems().isEmpty) }
            #expect(try await guardd.shell("touch '\(app)/d1/after'").status != 0, "nothing more can be added")
        }
    }
}

/// Mounts a fresh `type` filesystem at `path`: tmpfs, or an image file made
/// with `mkfs.TYPE` and loop-mounted.
func mountFilesystem(_ type: String, at path: String, image: String) async throws {
    if type == "tmpfs" {
        try await sh("mount -t tmpfs -o mode=0755 tmpfs '\(path)'").requireSuccess()
    } else {
        try await sh("truncate -s 320M '\(image)' && mkfs.\(type) -q '\(image)' && mount -o loop '\(image)' '\(path)'").requireSuccess()
    }
}

/// Stops `process` and waits for it. SIGKILL: a process started from a test
/// thread inherits its blocked signals, and SIGTERM may be among them.
func kill(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
}

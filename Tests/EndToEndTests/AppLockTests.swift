import Foundation
import Testing
import TestSupport

/// The lock, end to end: a guardian approves through the real Guard, then a
/// real process of the child tries to break the app; revoke restores exactly.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct AppLockTests {
    /// Gives the child's app some shape before approval: a nested file, an empty
    /// folder and a symlink, all the child's.
    private func furnish(_ app: String, owner: ThrowawayUser) throws {
        try sh("""
            set -e
            mkdir -p '\(app)/lib' '\(app)/empty'
            echo data > '\(app)/lib/data.txt'
            ln -s lib/data.txt '\(app)/link'
            chown -R -h \(owner.name):\(owner.name) '\(app)'
            """).requireSuccess()
    }

    /// Runs `command` with `/bin/sh` as `user`.
    private func asUser(_ user: ThrowawayUser, _ command: String) async throws -> ProcessResult {
        try await run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                                           "/bin/sh", "-c", command])
    }

    @Test func everyAttackOfTheChildFailsAndRevokeRestoresExactly() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            let elsewhere = "\(guardd.appsRoot)/\(guardd.child.name)"
            try furnish(app, owner: guardd.child)
            let original = try TreeSnapshot.take(app)

            try await guardd.requestApproved().requireSuccess()
            let locked = try TreeSnapshot.take(app)
            #expect(locked.unlockedItems().isEmpty, "not locked:\n\(locked.unlockedItems())")
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")

            let exe = "\(app)/familycontrols-demo"
            let attacks: [(String, String)] = [
                ("rm -rf the app", "rm -rf '\(app)'"),
                ("rm a nested file", "rm -f '\(app)/lib/data.txt'"),
                ("rmdir an empty nested folder", "rmdir '\(app)/empty'"),
                ("mv the app elsewhere", "mv '\(app)' '\(elsewhere)/moved'"),
                ("mv a file out", "mv '\(app)/lib/data.txt' '\(elsewhere)/'"),
                ("truncate the executable", "truncate -s 0 '\(exe)'"),
                ("overwrite the executable", "echo x > '\(exe)'"),
                ("chmod u+w", "chmod u+w '\(exe)'"),
                ("chown", "chown \(guardd.child.name) '\(exe)'"),
                ("create a file inside", "touch '\(app)/new'"),
                ("hard-link out, then delete the original", "ln '\(app)/lib/data.txt' '\(elsewhere)/hard' && rm -f '\(app)/lib/data.txt'"),
                ("replace a file with a symlink", "ln -sf /etc/passwd '\(app)/lib/data.txt'"),
            ]
            for (name, command) in attacks {
                let result = try await asUser(guardd.child, command)
                #expect(result.status != 0, "\(name) succeeded")
                #expect(try TreeSnapshot.take(app) == locked, "\(name) changed the tree")
            }
            #expect(!FileManager.default.fileExists(atPath: "\(elsewhere)/hard"))

            let revoked = try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID])
            #expect(revoked.status == 0, "\(revoked.standardError)")
            #expect(try TreeSnapshot.take(app) == original)
            #expect(try await guardd.authorization()?["lock"] == nil)
            let removed = try await asUser(guardd.child, "rm -rf '\(app)'")
            #expect(removed.status == 0, "\(removed.standardError)")
            #expect(!FileManager.default.fileExists(atPath: app))
        }
    }

    @Test func renamingTheChildsOwnFolderKeepsTheLockAndStatusFollows() async throws {
        try await withGuard { guardd in
            let app = try guardd.installDemo(for: guardd.child, appID: "org.example.Home", inHome: true)
            try furnish(app, owner: guardd.child)
            let original = try TreeSnapshot.take(app)
            let executable = "\(app)/familycontrols-demo"
            try await guardd.requestApproved(executable: executable).requireSuccess()
            let home = "\(guardd.homesRoot)/\(guardd.child.name)"
            let renamed = try await asUser(guardd.child, "mv '\(home)/Applications' '\(home)/Moved'")
            #expect(renamed.status == 0, "the child owns its home: \(renamed.standardError)")
            let moved = "\(home)/Moved/org.example.Home"
            #expect(try TreeSnapshot.take(moved).unlockedItems().isEmpty)
            #expect(try await asUser(guardd.child, "rm -rf '\(moved)'").status != 0)

            let row = try #require(try await guardd.authorization(appID: "org.example.Home"))
            #expect(row["path"]?.stringValue == moved)
            #expect(row["lock"]?.stringValue == "locked")

            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", "org.example.Home"]).requireSuccess()
            #expect(try TreeSnapshot.take(moved) == original)
        }
    }

    @Test func anIndividualApprovalLocksNothing() async throws {
        try await withGuard { guardd in
            let app = "\(guardd.appsRoot)/\(guardd.adult.name)/\(GuardFixture.appID)"
            let before = try TreeSnapshot.take(app)
            try await guardd.app(["request", "--member", "individual", "--stdin"], as: guardd.adult,
                                 input: "y\n\(guardd.adult.password ?? "")\n").requireSuccess()
            #expect(try TreeSnapshot.take(app) == before)
            #expect(try await asUser(guardd.adult, "rm -rf '\(app)'").status == 0)
        }
    }

    @Test func leavingEveryFamilyRevokesAndUnlocksAtTheNextReload() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            try await guardd.requestApproved().requireSuccess()
            try guardd.writeConfiguration(children: [guardd.adult.name])
            try await guardd.reload()
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try TreeSnapshot.take(app).items.allSatisfy { $0.uid == guardd.child.uid && !$0.isImmutable })
            let rows = try await guardd.auditRows()
            #expect(rows.contains("configuration revoke \(guardd.child.name) \(GuardFixture.appID) revoked"), "\(rows)")
        }
    }

    @Test func aChildRemovedFromTheGroupIsRevokedAtThePeriodicCheckWithoutAReload() async throws {
        try await withThrowawayGroup(members: []) { kids in
            try await withGuard(extraConfiguration: "[Locks]\nVerifyInterval=1s\n") { guardd in
                try guardd.writeConfiguration(children: ["@\(kids)"], extra: "[Locks]\nVerifyInterval=1s\n")
                try await sh("gpasswd -a \(guardd.child.name) \(kids)").requireSuccess()
                try await guardd.reload()
                try await guardd.requestApproved().requireSuccess()
                #expect(try await guardd.storedStatus() == "approved")
                try await sh("gpasswd -d \(guardd.child.name) \(kids)").requireSuccess()
                var status = try await guardd.storedStatus()
                for _ in 0..<100 where status != "notDetermined" {
                    try await Task.sleep(for: .milliseconds(100))
                    status = try await guardd.storedStatus()
                }
                #expect(status == "notDetermined", "\(guardd.log)")
                // The record goes first, the lock is released just after it.
                #expect(await eventually { (try? TreeSnapshot.take(guardd.appDirectory).items.allSatisfy { !$0.isImmutable }) == true },
                        "\(guardd.log)")
            }
        }
    }

    /// A family's group that cannot be found (a directory down looks the
    /// same) is no proof that its children left: the child keeps the lock.
    @Test func aGroupThatCannotBeFoundRevokesNothing() async throws {
        try await withThrowawayGroup(members: []) { kids in
            try await withGuard(extraConfiguration: "[Locks]\nVerifyInterval=1s\n") { guardd in
                try guardd.writeConfiguration(children: ["@\(kids)"], extra: "[Locks]\nVerifyInterval=1s\n")
                try await sh("gpasswd -a \(guardd.child.name) \(kids)").requireSuccess()
                try await guardd.reload()
                try await guardd.requestApproved().requireSuccess()
                try await sh("groupdel \(kids)").requireSuccess()
                try await guardd.reload()
                try await Task.sleep(for: .seconds(2))
                #expect(try await guardd.storedStatus() == "approved")
                #expect(guardd.log.contains("cannot be found now"), "\(guardd.log)")
                #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").status != 0)
                try await sh("groupadd \(kids)").requireSuccess()  // for the group's own clean-up
            }
        }
    }

    @Test func graduationRevokesEveryChildApprovalAtOnce() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            try await guardd.requestApproved().requireSuccess()
            let graduated = try await guardd.familyctl(["graduate", guardd.child.name])
            #expect(graduated.status == 0)
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try TreeSnapshot.take(app).items.allSatisfy { $0.uid == guardd.child.uid && !$0.isImmutable })
            #expect(try await guardd.auditRows().contains { $0.hasPrefix("root graduate \(guardd.child.name)") })
        }
    }

    @Test func locksVerifyReportsAndRepairsDrift() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            try furnish(app, owner: guardd.child)
            try await guardd.requestApproved().requireSuccess()
            let clean = try await guardd.familyctl(["locks", "verify"])
            #expect(clean.status == 0)
            #expect(clean.standardOutput == "familyctl: every lock is whole\n")

            // Someone with root loosens one file.
            try await sh("chattr -i '\(app)/lib/data.txt' && chmod 0666 '\(app)/lib/data.txt'").requireSuccess()
            let drift = try await guardd.familyctl(["locks", "verify"])
            #expect(drift.status == 1)
            #expect(drift.standardOutput.contains("lib/data.txt"))
            #expect(drift.standardError.contains("problem(s) found; each was repaired where it could be"))
            #expect(try TreeSnapshot.take(app).unlockedItems().isEmpty)
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
        }
    }

    @Test func theGuardKilledMidLockOrUnlockFinishesOnRestart() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            // A large app, so the lock takes long enough to be interrupted.
            try await sh("""
                set -e
                for d in $(seq 1 50); do mkdir -p '\(app)/d'$d; for f in $(seq 1 100); do echo $d$f > '\(app)/d'$d/f$f; done; done
                chown -R \(guardd.child.name):\(guardd.child.name) '\(app)'
                """).requireSuccess()
            let original = try TreeSnapshot.take(app)
            let database = "\(guardd.stateDirectory)/familycontrols.db"
            /// Starts `arguments`, waits until the journal says the lock is `state`, then
            /// kills the Guard. Returns whether the kill left the lock half done.
            func killDuring(_ state: String, _ arguments: [String]) async throws -> Bool {
                async let command = guardd.familyctl(arguments)
                for _ in 0..<400 {
                    let row = try await run("/usr/bin/sqlite3", [database, "SELECT state FROM locks"])
                    if row.standardOutput.hasPrefix(state) { break }
                    // Too late: the lock already finished (or the unlock already removed it).
                    if state == "locking" && row.standardOutput.hasPrefix("locked") { break }
                    if state == "unlocking" && row.standardOutput.isEmpty { break }
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...15)))
                guardd.stop(signal: SIGKILL)
                _ = try? await command
                let left = try await run("/usr/bin/sqlite3", [database, "SELECT state FROM locks"])
                try await guardd.start()
                return left.standardOutput.hasPrefix(state)
            }
            var interrupted = 0
            for round in 0..<4 {
                if try await killDuring("locking", ["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]) {
                    interrupted += 1
                }
                try await guardd.waitUntilReconciled()
                // An approval is recorded only once its lock is whole: killed before
                // that, the restart finishes the lock and, finding no approval,
                // releases it again. Never approved-but-unlocked, never locked-but-unapproved.
                if try await guardd.storedStatus() == "approved" {
                    #expect(try TreeSnapshot.take(app).unlockedItems().isEmpty, "round \(round): approved but not fully locked")
                } else {
                    #expect(try TreeSnapshot.take(app) == original, "round \(round): not approved, yet not restored")
                    try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"])
                        .requireSuccess()
                }

                if try await killDuring("unlocking", ["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID]) {
                    interrupted += 1
                }
                try await guardd.waitUntilReconciled()
                // The revoke was durable before the unlock began: the restart finishes the restore.
                #expect(try await guardd.storedStatus() == "notDetermined", "round \(round)")
                #expect(try TreeSnapshot.take(app) == original, "round \(round): not restored exactly")
            }
            let log = guardd.log
            let finished = log.components(separatedBy: "finished locking").count - 1
                + log.components(separatedBy: "finished unlocking").count - 1
            #expect(interrupted > 0, "no kill landed mid-lock or mid-unlock")
            let lockLines = log.split(separator: "\n").filter { $0.contains("lock") || $0.contains("reconcile") }
            #expect(finished == interrupted, "every interrupted lock or unlock is finished at the next start: \(lockLines)")
        }
    }
}

/// Polls `condition` until it holds or `timeout` seconds pass.
func waitUntil(timeout: Double, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw FixtureError("condition not met within \(timeout) s")
}

import Foundation
import Testing
import TestSupport

/// What a child can make the Guard store, and what the Guard does when its
/// store cannot be read: bounded, and closed.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct StoreAttackTests {
    @Test func aChildWithManyAppsCannotMakeTheGuardRecordWithoutEnd() async throws {
        try await withGuard { guardd in
            var outcomes: [ProcessResult] = []
            let started = Date()
            for index in 0..<14 {
                let app = try guardd.installDemo(for: guardd.child, appID: "org.example.Spam\(index)")
                outcomes.append(try await guardd.app(["request", "--member", "child", "--stdin"], input: "don't allow\n",
                                                     executable: app + "/familycontrols-demo"))
            }
            let denied = outcomes.filter { $0.standardOutput == "status: denied\n" }
            let refused = outcomes.filter { $0.standardError.contains("Too many requests. Try again in ") }
            // The quota earns a place back every 30 s: a slow run (both cores
            // busy) may see one more request through for each place earned.
            let earned = Int((Date().timeIntervalSince(started) / 30).rounded(.up))
            #expect(denied.count >= 10 && denied.count <= 10 + earned, "a burst of ten, then the quota")
            let other = outcomes.filter { $0.standardOutput != "status: denied\n" && !$0.standardError.contains("Too many requests") }
            #expect(refused.count == 14 - denied.count, "neither denied nor refused: \(other)")
            #expect(refused.allSatisfy { !$0.standardError.contains("Allow “") }, "no alert once over the quota")
            let rows = try await guardd.auditRows().filter { $0.contains(" \(guardd.child.name) ") }
            #expect((1...1 + earned).contains(rows.filter { $0.hasSuffix(" refused") }.count),
                    "one row says the quota was reached: \(rows)")
            #expect(rows.count <= 21 + 2 * earned, "\(rows.count) audit rows for 14 attempts")
        }
    }

    @Test func aStoreThatCannotBeReadNeverReleasesALock() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let locked = try TreeSnapshot.take(guardd.appDirectory)
            // A row the Guard cannot read, as damage or a bad hand edit would leave.
            try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db", """
                PRAGMA ignore_check_constraints = ON;
                INSERT INTO authorizations (user, app_id, uid, member, status, updated_at, app_path)
                VALUES ('nobody-here', 'org.example.Damaged', 4242, 'child', 'bogus', 0, '/nowhere');
                """]).requireSuccess()

            let verify = try await guardd.familyctl(["locks", "verify"])
            #expect(verify.status != 0)
            #expect(verify.standardError.contains("could not read its store"), "\(verify.standardError)")
            #expect(try TreeSnapshot.take(guardd.appDirectory) == locked, "a read error released the lock")
            let status = try await guardd.familyctl(["status"])
            #expect(status.status != 0, "a read error is not \"No authorizations.\": \(status.standardOutput)")

            guardd.stop()
            await #expect(throws: FixtureError.self, "the Guard must refuse to start on a store it cannot read") {
                try await guardd.start()
            }
            #expect(try TreeSnapshot.take(guardd.appDirectory) == locked, "nor does a restart")
            #expect(guardd.log.contains("cannot start"), "\(guardd.log)")
        }
    }
}

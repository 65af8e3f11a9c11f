import Foundation
import Testing
import TestSupport

/// `familyctl log` against a real Guard: the audit trail as root, a guardian,
/// a stranger and the child read it, with its filters and its JSON.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct AuditLogTests {
    /// `familyctl log --json` as `user` (root when nil) with `arguments`.
    private func events(_ guardd: GuardFixture, _ arguments: [String] = [],
                        as user: ThrowawayUser? = nil) async throws -> [[String: Any]] {
        let result = user == nil
            ? try await guardd.familyctl(["log", "--json"] + arguments)
            : try await guardd.familyctlAsGuardian(["log", "--json"] + arguments, as: user)
        try #require(result.status == 0, "\(result.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        return try #require(object?["events"] as? [[String: Any]])
    }

    @Test func everyoneReadsWhatTheyMayAndTheFiltersHold() async throws {
        try await withGuard { guardd in
            let child = guardd.child.name, guardian = guardd.guardian.name
            // A wrong password from the guardian's own session first, then the approval.
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let wrong = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "not-the-password\n")
            #expect(wrong.status != 0)
            let right = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                             input: "\(guardd.guardian.password ?? "")\n")
            #expect(right.status == 0, "\(right.standardError)")
            app.endInput()
            #expect(await app.exitStatus() == 0)
            // Something about another user, which the guardian must not see.
            let other = try await guardd.familyctl(["set", "--user", guardd.adult.name, "--app", GuardFixture.appID, "denied"])
            #expect(other.status == 0, "\(other.standardError)")

            // Root sees everything, oldest first, every field documented.
            let all = try await events(guardd)
            let actions = all.map { "\($0["actor"] as? String ?? "?") \($0["action"] as? String ?? "?") \($0["user"] as? String ?? "?")" }
            #expect(actions.contains("\(guardian) approve \(child)"), "\(actions)")
            #expect(actions.contains("root set \(guardd.adult.name)"), "\(actions)")
            let failure = try #require(all.first { $0["outcome"] as? String == "authenticationFailed" }, "\(all)")
            #expect(failure["actor"] as? String == guardian)
            #expect(failure["user"] as? String == child)
            let ids = all.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted() && ids.count == all.count)
            #expect(all.allSatisfy { ($0["at"] as? String)?.hasSuffix("Z") == true })
            // Never a password, in any field.
            let text = try await guardd.familyctl(["log"])
            #expect(text.status == 0)
            #expect(text.standardOutput.hasPrefix("TIME"))
            #expect(!text.standardOutput.contains(guardd.guardian.password ?? "\u{0}"))
            #expect(!text.standardOutput.contains("not-the-password"))

            // The filters.
            #expect(try await events(guardd, ["--user", guardd.adult.name]).allSatisfy { $0["user"] as? String == guardd.adult.name })
            #expect(try await events(guardd, ["--user", guardd.adult.name]).count >= 1)
            let byApp = try await events(guardd, ["--app", GuardFixture.appID])
            #expect(!byApp.isEmpty && byApp.allSatisfy { $0["app"] as? String == GuardFixture.appID })
            #expect(try await events(guardd, ["--app", "org.example.None"]).isEmpty)
            #expect(try await events(guardd, ["--since", "2099-01-01"]).isEmpty)
            #expect(try await events(guardd, ["--since", "1h"]).count == all.count)
            #expect(try await events(guardd, ["--limit", "2"]).map { $0["id"] as? Int } == Array(ids.suffix(2)))

            // The guardian: their child's events, no one else's.
            let theirs = try await events(guardd, as: guardd.guardian)
            #expect(!theirs.isEmpty && theirs.allSatisfy { $0["user"] as? String == child }, "\(theirs)")
            #expect(theirs.count == all.filter { $0["user"] as? String == child }.count)
            // A stranger: nothing, with a hint; asking for the child is refused.
            let stranger = try await guardd.familyctlAsGuardian(["log"], as: guardd.adult)
            #expect(stranger.status == 0)
            #expect(stranger.standardOutput.hasPrefix("No audit events you may read"))
            let nosy = try await guardd.familyctlAsGuardian(["log", "--user", child], as: guardd.adult)
            #expect(nosy.status == 4)
            #expect(nosy.standardError.contains("only root or a guardian of \(child)"))
            // The child, too, sees nothing about themself.
            #expect(try await events(guardd, as: guardd.child).isEmpty)
            let childStatus = try await guardd.familyctlAsGuardian(["status"], as: guardd.child)
            #expect(childStatus.status == 0)
            #expect(childStatus.standardOutput.hasPrefix("No authorizations you may see"))
        }
    }

    @Test func aUserWhoDoesNotExistIsNotFoundEverywhere() async throws {
        try await withGuard { guardd in
            let missing = "nosuch\(UInt32.random(in: 0...UInt32.max))"
            for arguments in [["log", "--user", missing], ["status", "--user", missing], ["graduate", missing]] {
                let result = try await guardd.familyctl(arguments)
                #expect(result.status == 1, "\(arguments): \(result.standardError)")
                #expect(result.standardError.contains("no such user \(missing)"), "\(arguments): \(result.standardError)")
            }
            // A real user with nothing recorded is simply empty.
            let empty = try await guardd.familyctl(["status", "--user", guardd.adult.name])
            #expect(empty.status == 0, "\(empty.standardError)")
        }
    }

    @Test func oldEventsArePrunedAtStartByTheRetentionSetting() async throws {
        try await withGuard(extraConfiguration: "\n[Audit]\nRetention=30d\n") { guardd in
            try await guardd.requestApproved().requireSuccess()
            let before = try await events(guardd)
            #expect(!before.isEmpty)
            // Age every event but the newest past the retention, as a clock would.
            guardd.stop()
            let newest = try #require(before.last?["id"] as? Int)
            let aged = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                          "UPDATE audit SET at = at - 31 * 86400 WHERE id < \(newest)"])
            #expect(aged.status == 0, "\(aged.standardError)")
            try await guardd.start()
            let after = try await events(guardd)
            // The newest event survives; so do the ones the new start wrote.
            #expect(after.first?["id"] as? Int == newest, "\(after)")
            #expect(guardd.log.contains("audit: removed \(before.count - 1) event"), "\(guardd.log)")
        }
    }
}

import Foundation
import Testing
import TestSupport

/// `familyctl forget USER` against a real Guard: the records of a child whose
/// account was deleted go, their lock with them, and nothing of a user who
/// still exists can be forgotten.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct ForgetTests {
    /// Whether `path` carries the immutable attribute, as `lsattr -d` shows it.
    private func isImmutable(_ path: String) async throws -> Bool {
        let shown = try await run("/usr/bin/lsattr", ["-d", path]).requireSuccess().standardOutput
        return shown.split(separator: " ").first?.contains("i") == true
    }

    @Test func aDeletedChildsRecordsAndLockAreForgottenAndTheAuditTrailSaysSo() async throws {
        try await withGuard { guardd in
            let child = guardd.child.name
            try await guardd.familyctl(["set", "--user", child, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            #expect(try await isImmutable(guardd.appDirectory), "the approval locked the app's folder")

            // A user who still has an account is not forgotten: graduating is the way.
            let refused = try await guardd.familyctl(["forget", child])
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("still has an account"), "\(refused.standardError)")
            #expect(try await guardd.storedStatus() == "approved")

            // Nor by anyone but root.
            let guardian = try await guardd.familyctlAsGuardian(["forget", child])
            #expect(guardian.status == 4, "\(guardian.standardError)")

            try await offload { removeThrowawayUser(guardd.child) }
            let forgot = try await guardd.familyctl(["forget", child])
            #expect(forgot.status == 0, "\(forgot.standardError) \(guardd.log.suffix(800))")
            #expect(forgot.standardOutput == "familyctl: forgot \(child): \(GuardFixture.appID)\n")
            #expect(try await !isImmutable(guardd.appDirectory), "the forgotten approval's lock is released")
            let rows = try await guardd.call("ListAuthorizations")["authorizations"]?.arrayValue ?? []
            #expect(!rows.contains { $0.objectValue?["user"]?.stringValue == child }, "\(rows)")

            // The trail keeps what happened, the forgetting included.
            let log = try await guardd.familyctl(["log", "--user", child, "--json"]).requireSuccess().standardOutput
            let events = try #require(JSONSerialization.jsonObject(with: Data(log.utf8)) as? [String: Any])["events"] as? [[String: Any]]
            #expect(events?.contains { $0["action"] as? String == "forget" && $0["outcome"] as? String == "forgotten" } == true, "\(log)")
            #expect(events?.contains { $0["action"] as? String == "set" } == true, "the approval's own event stays")

            let again = try await guardd.familyctl(["forget", child])
            #expect(again.standardOutput == "familyctl: the Guard had no records of \(child)\n", "\(again.standardError)")
        }
    }

    /// A directory NSS cannot reach is no "no such user": with `sss` in the
    /// Guard's nsswitch.conf and no SSSD to answer (glibc then returns the
    /// `ENOENT` SSSD's missing socket left, which reads like "not found"),
    /// a deleted child is not forgotten until every source answers. The
    /// Guard runs in a mount namespace of its own, its nsswitch.conf and
    /// SSSD's socket folder replaced there only, so no other test's lookups change.
    @Test(.enabled(if: libnssSSSInstalled, "needs libnss-sss (Config/install.sh --packages-only)"))
    func aUserASourceCannotAnswerForIsNotForgottenUntilItCan() async throws {
        try await withGuard { guardd in
            let child = guardd.child.name
            try await guardd.familyctl(["set", "--user", child, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let nsswitch = try String(contentsOfFile: "/etc/nsswitch.conf", encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasPrefix("passwd:") ? "passwd: files sss" : String($0) }.joined(separator: "\n")
            try nsswitch.write(toFile: "\(guardd.directory)/nsswitch.conf", atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: "\(guardd.directory)/no-sssd", withIntermediateDirectories: true)
            guardd.stop()
            guardd.launchPrefix = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                                   "mount --bind \"$0/nsswitch.conf\" /etc/nsswitch.conf && mkdir -p /var/lib/sss/pipes "
                                       + "&& mount --bind \"$0/no-sssd\" /var/lib/sss/pipes && exec \"$@\"", guardd.directory]
            try await guardd.start()
            try await offload { removeThrowawayUser(guardd.child) }

            let refused = try await guardd.familyctl(["forget", child])
            #expect(refused.status != 0, "\(refused.standardOutput)")
            #expect(refused.standardError.contains("could not say whether \(child) exists"), "\(refused.standardError)")
            #expect(refused.standardError.contains("nothing was forgotten"), "\(refused.standardError)")
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await isImmutable(guardd.appDirectory), "the lock stays while the directory cannot answer")

            // Every source answering again (the machine's own nsswitch.conf), the child is forgotten.
            guardd.stop()
            guardd.launchPrefix = []
            try await guardd.start()
            let forgot = try await guardd.familyctl(["forget", child])
            #expect(forgot.status == 0, "\(forgot.standardError)")
            #expect(try await !isImmutable(guardd.appDirectory))
        }
    }

    private static var libnssSSSInstalled: Bool {
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"].contains {
            FileManager.default.fileExists(atPath: "\($0)/libnss_sss.so.2")
        }
    }

    @Test func aNameThatIsNoUserNameIsRefused() async throws {
        try await withGuard { guardd in
            let bad = try await guardd.familyctl(["forget", "../../etc"])
            #expect(bad.status != 0)
            #expect(bad.standardError.contains("is not a valid user name"), "\(bad.standardError)")
        }
    }
}

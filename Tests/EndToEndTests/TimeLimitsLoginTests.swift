import Foundation
import Testing
import TestSupport

/// The two halves of time limits together: what a parent or guardian sets
/// with familyctl, the real Guard writes to its login-limits file, and the
/// shipped PAM account line (the module just built, in copies of the
/// machine's stacks in a private mount namespace) keeps at a real `su -`
/// login; more time from a guardian lets the child back in, also with the
/// Guard stopped.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/pam-auth-update"),
                "needs pam-auth-update (Debian's libpam-runtime)"))
struct TimeLimitsLoginTests {
    static let marker = "in-42"

    /// `su - USER` as root in the private stacks: su still runs the account phase.
    private func su(_ stack: PrivateLoginStack, _ user: String) async throws -> ProcessResult {
        try await run("/usr/bin/env", ["-u", "TZ"] + stack.namespace(["/usr/bin/su", "-", user, "-s", "/bin/sh", "-c",
                                                                     "echo in-$((6*7))"]))
    }

    /// Whether `su - user` gets in within 10 s (the Guard rewrites its file as limits change).
    private func getsIn(_ stack: PrivateLoginStack, _ user: String) async throws -> Bool {
        for _ in 0..<100 {
            if try await su(stack, user).standardOutput.contains(Self.marker) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    private func withApprovedChild(_ body: (GuardFixture, PrivateLoginStack) async throws -> Void) async throws {
        try await withGuard { guardd in
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let stack = try await PrivateLoginStack.make(socket: guardd.socket, limits: "\(guardd.stateDirectory)/login-limits")
            defer { stack.remove() }
            try await body(guardd, stack)
        }
    }

    @Test func hoursAGuardianSetsKeepTheChildOutAtLoginAndMoreTimeLetsThemInAlsoWithTheGuardStopped() async throws {
        try await withApprovedChild { guardd, stack in
            let child = guardd.child.name
            #expect(try await su(stack, child).standardOutput.contains(Self.marker), "no limits yet: the child logs in")

            // Hours that do not hold now, in this machine's local time.
            let now = LoginLimits.now()
            let hours = now.minute >= 120 ? "Mon-Sun 00:00-01:00" : "Mon-Sun 12:00-13:00"
            try await guardd.familyctl(["limits", "set", "--user", child, "--app", GuardFixture.appID, "--hours", hours]).requireSuccess()
            var refused = ProcessResult(status: 0, standardOutput: "", standardError: "")
            for _ in 0..<50 {
                refused = try await su(stack, child)
                if refused.status != 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(refused.status != 0, "outside the hours the Guard wrote: \(refused.standardOutput)")
            // Approved by root's `set`, the app has no name a guardian saw: the child reads its ID.
            #expect(refused.standardError.contains(GuardFixture.appID) && refused.standardError.contains("log in again"),
                    "\(refused.standardError)")
            #expect(refused.standardError.contains("familyctl limits more --user \(child)"), "\(refused.standardError)")
            #expect(try await su(stack, guardd.adult.name).status == 0, "an adult is never touched")

            // More time from a guardian: 30 minutes outside the hours.
            try await guardd.familyctl(["limits", "more", "--user", child, "--minutes", "30"]).requireSuccess()
            #expect(try await getsIn(stack, child), "more time lets the child in: \(guardd.log.suffix(1500))")

            // The file the Guard last wrote holds with the Guard stopped.
            guardd.stop()
            #expect(try await su(stack, child).standardOutput.contains(Self.marker))
        }
    }

    @Test func aDaysTimeUsedUpRefusesTheNextLoginUntilAGuardianGivesMoreTime() async throws {
        try await withApprovedChild { guardd, stack in
            let child = guardd.child.name
            try await guardd.familyctl(["limits", "set", "--user", child, "--app", GuardFixture.appID, "--daily", "0m"]).requireSuccess()
            var refused = ProcessResult(status: 0, standardOutput: "", standardError: "")
            for _ in 0..<50 {
                refused = try await su(stack, child)
                if refused.status != 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(refused.status != 0, "the day's time is spent: \(refused.standardOutput)")
            #expect(refused.standardError.contains("Your time for today is used up: \(GuardFixture.appID)"), "\(refused.standardError)")

            try await guardd.familyctl(["limits", "more", "--user", child, "--minutes", "5"]).requireSuccess()
            #expect(try await getsIn(stack, child), "five more minutes let the child in: \(guardd.log.suffix(1500))")
        }
    }

    /// Where GNOME's parental controls (malcontent) set session limits for
    /// the same child, `--check-config` says both apply.
    @Test func checkConfigSaysWhenMalcontentsSessionLimitsAndAnAppsBothHoldForAChild() async throws {
        try await withGuard { guardd in
            let child = guardd.child.name
            try await guardd.familyctl(["set", "--user", child, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let folder = "/var/lib/AccountsService/users"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let file = "\(folder)/\(child)"
            try "[com.endlessm.ParentalControls.SessionLimits]\nLimitType=uint32 1\nDailySchedule=(28800, 72000)\n"
                .write(toFile: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            func check() async throws -> ProcessResult {
                try await run(productPath("familycontrolsd"), ["--check-config", "--config", guardd.configPath,
                                                               "--state-dir", guardd.stateDirectory, "--pam-dir", guardd.pamDirectory])
            }
            let before = try await check()
            #expect(!before.standardError.contains("malcontent"), "no app set limits yet: \(before.standardError)")
            try await guardd.familyctl(["limits", "set", "--user", child, "--app", GuardFixture.appID, "--daily", "2h"]).requireSuccess()
            let after = try await check()
            #expect(after.status == 0, "a warning, not a refusal: \(after.standardError)")
            #expect(after.standardError.contains("\(file): warning: \(child) has GNOME parental controls' session limits (malcontent)"),
                    "\(after.standardError)")

            // A store of a Guard older than time limits is read as it is, never
            // migrated by the check (that Guard may still be running from it).
            let older = "\(guardd.directory)/older-state"
            try FileManager.default.createDirectory(atPath: older, withIntermediateDirectories: true)
            try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db", ".backup '\(older)/familycontrols.db'"])
                .requireSuccess()
            try await run("/usr/bin/sqlite3", ["\(older)/familycontrols.db",
                                               "DROP TABLE more_time; DROP TABLE time_limits; PRAGMA user_version = 12;"])
                .requireSuccess()
            let checkedOlder = try await run(productPath("familycontrolsd"), ["--check-config", "--config", guardd.configPath,
                                                                              "--state-dir", older, "--pam-dir", guardd.pamDirectory])
            #expect(checkedOlder.status == 0 && !checkedOlder.standardError.contains("malcontent"), "\(checkedOlder.standardError)")
            let version = try await run("/usr/bin/sqlite3", ["\(older)/familycontrols.db", "PRAGMA user_version"]).requireSuccess()
            #expect(version.standardOutput == "12\n", "the check migrated the store: \(version.standardOutput)")

            // A store that cannot be read is said as such, never taken for "no limits".
            let damaged = "\(guardd.directory)/damaged-state"
            try FileManager.default.createDirectory(atPath: damaged, withIntermediateDirectories: true)
            try "not a database".write(toFile: "\(damaged)/familycontrols.db", atomically: true, encoding: .utf8)
            let unreadable = try await run(productPath("familycontrolsd"), ["--check-config", "--config", guardd.configPath,
                                                                            "--state-dir", damaged, "--pam-dir", guardd.pamDirectory])
            #expect(unreadable.standardError.contains("\(damaged)/familycontrols.db: warning: cannot read the time limits apps set"),
                    "\(unreadable.standardError)")
        }
    }
}

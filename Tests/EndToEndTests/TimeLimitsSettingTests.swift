import Foundation
import SystemKit
import Testing
import TestSupport
import Varlink

/// The time limits an approved app sets for its child, and more time from a
/// guardian, against a real Guard, real users and real PAM, the demo app run
/// as the child (the library's `TimeLimitsStore`).
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products (familycontrolsd, familyctl, familycontrols-demo)"))
struct TimeLimitsSettingTests {
    @Test func anApprovedAppsStricterLimitsTakeEffectAtOnceAndLooserOnesWaitForAGuardian() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await approveDemo(guardd)
            let first = try await guardd.app(["limits", "set", "--hours", "Mon-Sun 07:00-21:00", "--daily", "2h"])
            #expect(first.status == 0, "\(first.standardError)\n\(guardd.log)")
            #expect(first.standardOutput == "limits: applied\n")
            #expect(try await childLimits(guardd)?["daily"] as? Int == 7200)

            let stricter = try await guardd.app(["limits", "set", "--hours", "Mon-Sun 08:00-20:00", "--daily", "1h",
                                                 "--at-end", "end"])
            #expect(stricter.standardOutput == "limits: applied\n", "\(stricter.standardError)")
            let applied = try #require(try await childLimits(guardd))
            #expect(applied["hours"] as? String == "Mon-Sun 08:00-20:00")
            #expect(applied["daily"] as? Int == 3600)
            #expect(applied["atEnd"] as? String == "end")

            // Looser: a request; nothing changes while it waits, nor when it is denied.
            let denied = try startLimitsApp(guardd, ["limits", "set", "--hours", "Mon-Sun 08:00-20:00", "--daily", "3h",
                                                     "--at-end", "end", "--stdin"])
            defer { denied.stop() }
            let deniedID = try await guardd.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests"])
            #expect(listed.standardOutput.contains("set time limits"), "\(listed.standardOutput)")
            #expect(listed.standardOutput.contains("3h a day"), "\(listed.standardOutput)")
            #expect(try await childLimits(guardd)?["daily"] as? Int == 3600)
            let no = try await guardd.familyctlAsGuardian(["deny", String(deniedID), "--stdin"],
                                                          input: "\(guardd.guardian.password ?? "")\n")
            #expect(no.status == 0, "\(no.standardError)")
            #expect(await denied.exitStatus() == 1)
            #expect(denied.standardError.contains("error 5 authorizationCanceled"), "\(denied.standardError)")
            #expect(try await childLimits(guardd)?["daily"] as? Int == 3600)

            let approved = try startLimitsApp(guardd, ["limits", "set", "--hours", "Mon-Sun 08:00-20:00", "--daily", "3h",
                                                       "--at-end", "end", "--stdin"])
            defer { approved.stop() }
            let approvedID = try await guardd.waitForPendingRequest()
            let yes = try await guardd.familyctlAsGuardian(["approve", String(approvedID), "--stdin"],
                                                           input: "\(guardd.guardian.password ?? "")\n")
            #expect(yes.status == 0, "\(yes.standardError)")
            #expect(yes.standardOutput.contains("are in force"), "\(yes.standardOutput)")
            #expect(await approved.exitStatus() == 0)
            #expect(approved.standardOutput == "limits: approved by a parent or guardian\n", "\(approved.standardError)")
            #expect(try await childLimits(guardd)?["daily"] as? Int == 10800)

            let audit = try await guardd.auditRows().filter { $0.contains(" limits ") }
            let kid = guardd.child.name, app = GuardFixture.appID
            #expect(audit == [
                "\(kid) limits \(kid) \(app) applied", "\(kid) limits \(kid) \(app) applied",
                "\(kid) limits \(kid) \(app) pending", "\(kid) limits \(kid) \(app) pending",
                "\(guardd.guardian.name) limits \(kid) \(app) denied",
                "\(kid) limits \(kid) \(app) pending", "\(kid) limits \(kid) \(app) pending",
                "\(guardd.guardian.name) limits \(kid) \(app) approved",
            ], "\(audit)")
            #expect(!guardd.log.contains(guardd.guardian.password ?? "-"))
        }
    }

    @Test func theChildsOwnProgramCannotSetLimitsNorAskForTime() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            // The same program, in another app folder of the child's that no one approved.
            let other = try guardd.installDemo(for: guardd.child, appID: "org.example.ChildsOwn")
            try await approveDemo(guardd)
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            for arguments in [["limits", "set", "--daily", "10h"], ["limits", "set", "--daily", "5m"], ["more-time", "60"]] {
                let result = try await guardd.app(arguments, executable: "\(other)/familycontrols-demo")
                #expect(result.status == 1, "\(arguments): \(result.standardOutput)")
                #expect(result.standardError.contains("only an app approved for"), "\(result.standardError)")
            }
            // And a copy outside every app root: not an app at all.
            let folder = "\(guardd.directory)/loose", loose = "\(folder)/familycontrols-demo"
            try await sh("mkdir -p \(folder) && cp \(guardd.appExecutable) \(loose) && chown -R \(guardd.child.name) \(folder)")
                .requireSuccess()
            let outside = try await guardd.app(["limits", "set", "--daily", "10h"], executable: loose)
            #expect(outside.status == 1)
            let limits = try #require(try await childLimits(guardd))
            #expect(limits["daily"] as? Int == 3600)
            #expect((limits["apps"] as? [[String: Any]])?.map { $0["app"] as? String } == [GuardFixture.appID])
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput.contains("\"requests\":[]"))
        }
    }

    @Test func theAppRunByTheChildWithArgumentsOfTheirOwnOnlyGainsARequest() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await approveDemo(guardd)
            try await guardd.app(["limits", "set", "--hours", "Mon-Fri 16:00-18:00", "--daily", "30m"]).requireSuccess()
            // Lifting every limit, then a whole day: each a request that waits; the child gives up, nothing changed.
            for arguments in [["limits", "set", "--stdin"],
                              ["limits", "set", "--hours", "Mon-Sun 00:00-24:00", "--daily", "24h", "--stdin"]] {
                let app = try startLimitsApp(guardd, arguments)
                _ = try await guardd.waitForPendingRequest()
                app.stop()
                var canceled = false
                for _ in 0..<200 where !canceled {
                    canceled = try await guardd.auditRows().last?.hasSuffix("canceled") == true
                    if !canceled { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(canceled, "no cancel was audited")
            }
            let limits = try #require(try await childLimits(guardd))
            #expect(limits["hours"] as? String == "Mon-Fri 16:00-18:00")
            #expect(limits["daily"] as? Int == 1800)
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput.contains("\"requests\":[]"))
        }
    }

    @Test func aGuardianSetsClearsAndGivesMoreTimeAndAGuardianOfAnotherFamilyIsRefused() async throws {
        try await withThrowawayUser(prefix: "t") { teacher in
            try await withThrowawayUser(prefix: "q") { pupil in
                try await withGuard(extraConfiguration: "InSessionApproval=yes\n[Family 5B]\nGuardians=\(teacher.name)\nChildren=\(pupil.name)\n") { guardd in
                    try await approveDemo(guardd)
                    let kid = guardd.child.name, app = GuardFixture.appID
                    let password = "\(guardd.guardian.password ?? "")\n"
                    let set = try await guardd.familyctlAsGuardian(
                        ["limits", "set", "--user", kid, "--app", app, "--hours", "Mon-Sun 06:00-22:00", "--daily", "90m",
                         "--stdin"], input: password)
                    #expect(set.status == 0, "\(set.standardError)\n\(guardd.log)")
                    #expect(set.standardOutput.contains("1h30m a day"), "\(set.standardOutput)")

                    // The other family's guardian sees nothing of this child and changes nothing.
                    let teacherPassword = "\(teacher.password ?? "")\n"
                    for arguments in [["limits", "set", "--user", kid, "--app", app, "--daily", "24h", "--stdin"],
                                      ["limits", "clear", "--user", kid, "--app", app, "--stdin"],
                                      ["limits", "more", "--user", kid, "--minutes", "600", "--stdin"],
                                      ["limits", "--user", kid]] {
                        let refused = try await guardd.familyctlAsGuardian(arguments, as: teacher, input: teacherPassword)
                        #expect(refused.status == 4, "\(arguments): \(refused.standardOutput)")
                        #expect(refused.standardError.contains("only root or a guardian of \(kid)"), "\(refused.standardError)")
                    }
                    #expect(try await guardd.familyctlAsGuardian(["limits", "--json"], as: teacher).standardOutput
                        .contains("\"children\":[]"))

                    let more = try await guardd.familyctlAsGuardian(["limits", "more", "--user", kid, "--minutes", "15", "--stdin"],
                                                                    input: password)
                    #expect(more.status == 0, "\(more.standardError)")
                    // The documented --json shape.
                    let listed = try await guardd.familyctlAsGuardian(["limits", "--json"])
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any])
                    let children = try #require(object["children"] as? [[String: Any]])
                    #expect(children.count == 1)
                    let child = try #require(children.first)
                    #expect(Set(child.keys).isSuperset(of: ["user", "uid", "apps", "hours", "daily", "atEnd", "day", "extra",
                                                            "allowedNow"]), "\(child.keys)")
                    #expect(child["user"] as? String == kid)
                    #expect(child["hours"] as? String == "Mon-Sun 06:00-22:00")
                    #expect(child["daily"] as? Int == 5400)
                    #expect(child["extra"] as? Int == 900)
                    #expect(child["atEnd"] as? String == "lock")
                    let apps = try #require(child["apps"] as? [[String: Any]])
                    #expect(apps.first?["app"] as? String == app)
                    #expect(apps.first?["setBy"] as? String == guardd.guardian.name)
                    #expect((apps.first?["setAt"] as? String)?.hasSuffix("Z") == true)
                    let text = try await guardd.familyctlAsGuardian(["limits"])
                    // The time keeper counts the day's time: none yet, no session having been open.
                    #expect(text.standardOutput.contains("lock    0m "), "\(text.standardOutput)")
                    #expect(text.standardOutput.contains("“FamilyControls Demo”"), "\(text.standardOutput)")

                    let clear = try await guardd.familyctlAsGuardian(["limits", "clear", "--user", kid, "--app", app, "--stdin"],
                                                                     input: password)
                    #expect(clear.status == 0, "\(clear.standardError)")
                    #expect(try await childLimits(guardd) == nil)
                    let audit = try await guardd.auditRows().filter { $0.contains(" limits ") || $0.contains(" time ") }
                    let name = guardd.guardian.name
                    #expect(audit == ["\(name) limits \(kid) \(app) applied", "\(name) time \(kid) - granted",
                                      "\(name) limits \(kid) \(app) removed"], "\(audit)")
                    #expect(!guardd.log.contains(guardd.guardian.password ?? "-"))
                }
            }
        }
    }

    @Test func moreTimeAskedByTheAppIsGivenWithTheMinutesTheGuardianChooses() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await approveDemo(guardd)
            // No limits in force: there is no more time to ask for.
            let early = try await guardd.app(["more-time", "10"])
            #expect(early.status == 1)
            #expect(early.standardError.contains("no time limits in force"), "\(early.standardError)")
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()

            let app = try startLimitsApp(guardd, ["more-time", "30", "--reason", "homework\u{1B}[2J", "--stdin"])
            defer { app.stop() }
            let id = try await guardd.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests", "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any])
            let request = try #require((object["requests"] as? [[String: Any]])?.first)
            #expect(request["purpose"] as? String == "time")
            #expect(request["minutes"] as? Int == 30)
            #expect((request["reason"] as? String)?.hasPrefix("homework") == true)
            #expect((request["reason"] as? String)?.contains("\u{1B}") == false)
            // --minutes is for a request for more time, within its bound.
            let huge = try await guardd.familyctlAsGuardian(["approve", String(id), "--minutes", "100000", "--stdin"],
                                                            input: "\(guardd.guardian.password ?? "")\n")
            #expect(huge.status == 2, "\(huge.standardError)")
            let given = try await guardd.familyctlAsGuardian(["approve", String(id), "--minutes", "20", "--stdin"],
                                                             input: "\(guardd.guardian.password ?? "")\n")
            #expect(given.status == 0, "\(given.standardError)")
            #expect(given.standardOutput.contains("20 more minutes today"), "\(given.standardOutput)")
            #expect(await app.exitStatus() == 0)
            #expect(app.standardOutput == "more time: 20 minutes given\n", "\(app.standardError)")
            #expect(try await childLimits(guardd)?["extra"] as? Int == 1200)
            // The app sees the same.
            let shown = try await guardd.app(["limits", "show"])
            #expect(shown.standardOutput.contains("more today 1200s"), "\(shown.standardOutput)")
        }
    }

    @Test func hostileInputGetsClearErrorsAndChangesNothing() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await approveDemo(guardd)
            try await guardd.app(["limits", "set", "--hours", "Mon-Fri 16:00-18:00", "--daily", "30m"]).requireSuccess()
            let before = try #require(try await childLimits(guardd))
            let kid = guardd.child.name, app = GuardFixture.appID
            let usage: [[String]] = [
                ["limits", "set", "--user", kid, "--app", app, "--hours", "Mon-Fri 25:00-26:00"],
                ["limits", "set", "--user", kid, "--app", app, "--hours", "Someday 09:00-10:00"],
                ["limits", "set", "--user", kid, "--app", app, "--daily", "forever"],
                ["limits", "set", "--user", kid, "--app", app, "--daily", "30h"],
                ["limits", "set", "--user", kid, "--app", app, "--at-end", "explode"],
                ["limits", "set", "--user", kid, "--app", app],
                ["limits", "more", "--user", kid, "--minutes", "100000"],
                ["limits", "more", "--user", kid, "--minutes", "-5"],
                ["limits", "frobnicate"],
            ]
            for arguments in usage {
                let result = try await guardd.familyctl(arguments)
                #expect(result.status == 2, "\(arguments): \(result.standardOutput)\(result.standardError)")
                #expect(!result.standardError.isEmpty)
            }
            let refused: [([String], String)] = [
                (["limits", "set", "--user", kid, "--app", "org.example.Unknown", "--daily", "1h"], "not approved for"),
                (["limits", "set", "--user", "fcnosuchuser", "--app", app, "--daily", "1h"], "not approved for"),
                (["limits", "set", "--user", "bad\nname", "--app", app, "--daily", "1h"], "not a valid user name"),
                (["limits", "clear", "--user", kid, "--app", "org.example.Unknown"], "not approved for"),
                (["limits", "more", "--user", "fcnosuchuser", "--minutes", "5"], "no time limits in force"),
            ]
            for (arguments, message) in refused {
                let result = try await guardd.familyctl(arguments)
                #expect(result.status == 1, "\(arguments): \(result.standardOutput)")
                #expect(result.standardError.contains(message), "\(arguments): \(result.standardError)")
            }
            // Straight over Varlink, past familyctl's own checks.
            let calls: [(String, JSONObject)] = [
                ("SetChildLimits", ["user": .string(kid), "app": .string(app), "hours": .string(String(repeating: "Mon 09:00-10:00,", count: 200))]),
                ("SetChildLimits", ["user": .string(kid), "app": .string(app), "daily": .string("99999999999h")]),
                ("GrantMoreTime", ["user": .string(kid), "minutes": .int(1 << 40)]),
                ("GrantMoreTime", ["user": .string(kid), "minutes": .int(0)]),
            ]
            for (method, parameters) in calls {
                await #expect(throws: (any Error).self, "\(method) \(parameters)") { _ = try await guardd.call(method, parameters) }
            }
            // The app's own hostile input.
            for arguments in [["limits", "set", "--hours", "Mon-Fri 18:00-16:00"], ["more-time", "99999"], ["more-time", "0"]] {
                let result = try await guardd.app(arguments)
                #expect(result.status == 1, "\(arguments)")
                #expect(result.standardError.contains("invalidArgument") || result.standardError.contains("error"),
                        "\(arguments): \(result.standardError)")
            }
            let after = try #require(try await childLimits(guardd))
            #expect(after["hours"] as? String == before["hours"] as? String)
            #expect(after["daily"] as? Int == before["daily"] as? Int)
            #expect(after["extra"] as? Int == 0)
        }
    }

    @Test func theSameSettingAgainChangesNothingAndAFloodOfSettingsIsRefused() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await approveDemo(guardd)
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            #expect(try await guardd.auditRows().filter { $0.contains(" limits ") }.count == 1)
            // Ever stricter, as fast as the child can: refused once past the request quota.
            var refused = 0
            for minutes in stride(from: 59, through: 45, by: -1) {
                let result = try await guardd.app(["limits", "set", "--daily", "\(minutes)m"])
                if result.status != 0 {
                    refused += 1
                    #expect(result.standardError.contains("Too many requests"), "\(result.standardError)")
                }
            }
            #expect(refused > 0)
            #expect(try await guardd.auditRows().filter { $0.contains(" limits ") }.count <= 12)
        }
    }

    @Test func forgettingADeletedChildRemovesTheirTimeLimitsAndMoreTime() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let child = guardd.child.name
            try await approveDemo(guardd)
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            try await guardd.familyctl(["limits", "more", "--user", child, "--minutes", "5"]).requireSuccess()
            try await offload { removeThrowawayUser(guardd.child) }
            try await guardd.familyctl(["forget", child]).requireSuccess()
            let rows = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                          "SELECT count(*) FROM time_limits; SELECT count(*) FROM more_time"])
            #expect(rows.standardOutput == "0\n0\n", "\(rows.standardOutput)\(rows.standardError)")
            #expect(try await guardd.auditRows().contains { $0.contains(" limits \(child) ") && $0.hasSuffix("removed") })
        }
    }

    @Test func moreTimeOutsideTheHoursLetsTheChildLogInForThatLong() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let child = guardd.child.name
            try await approveDemo(guardd)
            // No hours on any day: outside them now, whatever the time.
            try await guardd.familyctl(["limits", "set", "--user", child, "--app", GuardFixture.appID, "--hours", "none"])
                .requireSuccess()
            let closed = try #require(try await childLimits(guardd))
            #expect(closed["allowedNow"] as? Bool == false)
            #expect(closed["nextAllowed"] as? String == "never: no day has hours")
            #expect(closed["openUntil"] == nil || closed["openUntil"] is NSNull)
            let before = Date()
            try await guardd.familyctl(["limits", "more", "--user", child, "--minutes", "15"]).requireSuccess()
            let open = try #require(try await childLimits(guardd))
            #expect(open["allowedNow"] as? Bool == true)
            #expect(open["extra"] as? Int == 900)
            let until = try #require(ISO8601DateFormatter().date(from: open["openUntil"] as? String ?? ""))
            #expect(abs(until.timeIntervalSince(before) - 900) < 30, "\(until)")
            #expect(open["hours"] as? String == "none", "the hours themselves stay")
        }
    }

    // MARK: Helpers

    /// The child approves the demo app with a guardian at their screen (`InSessionApproval=yes`).
    private func approveDemo(_ guardd: GuardFixture) async throws {
        let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
        #expect(result.standardOutput == "status: approved\n", "\(result.standardError)\n\(guardd.log)")
    }

    /// The demo app run as the child with `arguments`, its standard input left open.
    private func startLimitsApp(_ guardd: GuardFixture, _ arguments: [String]) throws -> RunningApp {
        try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable, arguments))
    }

    /// The child's limits in force as root's `familyctl limits --json` shows them; nil for none.
    private func childLimits(_ guardd: GuardFixture) async throws -> [String: Any]? {
        let result = try await guardd.familyctl(["limits", "--json", "--user", guardd.child.name])
        guard result.status == 0 else { throw FixtureError("familyctl limits failed: \(result.standardError)") }
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        return (object?["children"] as? [[String: Any]])?.first
    }
}

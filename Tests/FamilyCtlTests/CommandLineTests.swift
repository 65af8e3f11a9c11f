@testable import FamilyCtl
import GuardProtocol
import SystemKit
import Testing
import TestSupport
import Varlink
#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// familyctl's own parts that need no Guard: where the socket comes from,
/// and how requests and authorizations are shown.
@Suite struct CommandLineTests {
    @Test("--socket is taken wherever it stands, in both spellings, and never after --", arguments: [
        (["status", "--socket", "/s"], "/s", ["status"]),
        (["--socket=/t", "requests", "--json"], "/t", ["requests", "--json"]),
        (["approve", "3"], nil, ["approve", "3"]),
        (["status", "--", "--socket", "/x"], nil, ["status", "--", "--socket", "/x"]),
    ] as [([String], String?, [String])])
    func socketOption(_ tokens: [String], _ socket: String?, _ rest: [String]) throws {
        var remaining = tokens
        #expect(try FamilyCtl.takeSocketOption(&remaining) == socket)
        #expect(remaining == rest)
    }

    @Test func aSocketOptionWithoutAValueIsAUsageError() {
        var tokens = ["status", "--socket"]
        #expect(throws: CommandFailure.self) { try FamilyCtl.takeSocketOption(&tokens) }
    }

    @Test func requestsShowEveryFieldAndEscapeWhatAChildChose() throws {
        let row = try Guard.Request([
            "id": .int(7), "user": .string("alice"), "app": .string("org.example.Paint"),
            "name": .string("Paint\u{1b}[2J"), "path": .string("/home/alice/Applications/org.example.Paint"),
            "purpose": .string("revoke"), "created": .double(0), "expires": .double(900),
        ])
        let table = FamilyCtl.requestsTable([row])
        #expect(table.hasPrefix("ID  USER   APP"))
        #expect(table.contains("7   alice  org.example.Paint  Paint\\x1B[2J  be revoked"))
        #expect(!table.unicodeScalars.contains { $0.value == 0x1b })
        #expect(FamilyCtl.requestsTable([]) == "No requests are waiting for you.")
        let json = FamilyCtl.requestsJSON([row])
        #expect(json.contains("\"expires\":\"1970-01-01T00:15:00Z\""), "\(json)")
        #expect(json.contains("\"purpose\":\"revoke\""))
    }

    @Test func anUpdateRequestShowsTheOldAndTheNewVersionEscaped() throws {
        let row = try Guard.Request([
            "id": .int(9), "user": .string("alice"), "app": .string("org.example.Paint"),
            "name": .string("Paint"), "path": .string("/apps/alice/org.example.Paint"),
            "purpose": .string("update"), "created": .double(0), "expires": .double(900),
            "from": .string("1.0 (manifest 0011223344556677)"), "to": .string("2.0\u{1b}[2J (manifest 8899aabbccddeeff)"),
        ])
        let table = FamilyCtl.requestsTable([row])
        #expect(table.contains("be updated"), "\(table)")
        #expect(table.hasSuffix("\nrequest 9 updates org.example.Paint from 1.0 (manifest 0011223344556677) "
            + "to 2.0\\x1B[2J (manifest 8899aabbccddeeff)"), "\(table)")
        #expect(!table.unicodeScalars.contains { $0.value == 0x1b })
        let json = FamilyCtl.requestsJSON([row])
        #expect(json.contains("\"purpose\":\"update\""))
        #expect(json.contains("\"from\":\"1.0 (manifest 0011223344556677)\""), "\(json)")
    }

    /// What a guardian is shown of the update key: the key an approval will
    /// trust, and a change of key in an update, in the list, the agent's
    /// notification (``FamilyCtl/describe(_:)``) and `--json`.
    @Test func theUpdateKeyAndItsChangeAreShownEscaped() throws {
        let key = "ed25519:" + String(repeating: "A", count: 42) + "E="
        let approve = Guard.Request(id: 4, user: "alice", app: "org.example.Paint", name: "Paint", path: "/apps/p",
                                    purpose: .approve, created: 0, expires: 900, updateKey: key)
        #expect(FamilyCtl.requestsTable([approve]).hasSuffix("\nrequest 4; once approved, new versions signed by its "
            + "update key \(key) are swapped in without asking you"))
        #expect(NotificationAgent.body(approve).contains("signed by its update key \(key)"))
        #expect(FamilyCtl.requestsJSON([approve]).contains("\"updateKey\":\"\(key)\""))

        let change = Guard.Request(id: 5, user: "alice", app: "org.example.Paint", name: "Paint", path: "/apps/p",
                                   purpose: .update, created: 0, expires: 900, from: "1.0", to: "1.0.1",
                                   updateKey: "ed25519:\u{1b}[2J", formerUpdateKey: key, note: "signed, but \u{1b}")
        let line = FamilyCtl.describe(change)
        #expect(line.contains("to be updated from 1.0 to 1.0.1"), "\(line)")
        #expect(line.contains("; the update key changes from \(key) to ed25519:\\x1B[2J, and new versions it signs "
            + "will then be swapped in without asking you (signed, but \\x1B)"), "\(line)")
        #expect(!FamilyCtl.requestsTable([change]).unicodeScalars.contains { $0.value == 0x1b })

        let dropped = Guard.Request(id: 6, user: "alice", app: "org.example.Paint", name: "Paint", path: "/apps/p",
                                    purpose: .update, created: 0, expires: 900, from: "1", to: "2", formerUpdateKey: key)
        #expect(FamilyCtl.describe(dropped).hasSuffix("; the update key changes from \(key) to none"))
        let unchanged = Guard.Request(id: 7, user: "alice", app: "org.example.Paint", name: "Paint", path: "/apps/p",
                                      purpose: .update, created: 0, expires: 900, from: "1", to: "2")
        #expect(!FamilyCtl.describe(unchanged).contains("update key"))
    }

    @Test func requestsShowLocalTimesAndTheJSONKeepsUTC() throws {
        let row = Guard.Request(id: 3, user: "alice", app: "org.example.Paint", name: "Paint", path: "/apps/p",
                                purpose: .approve, created: 1_800_000_000, expires: 1_800_000_900)
        let table = FamilyCtl.requestsTable([row])
        #expect(table.contains(UnixTime(seconds: 1_800_000_000).localDescription), "\(table)")
        #expect(table.contains(UnixTime(seconds: 1_800_000_900).localDescription), "\(table)")
        #expect(!table.contains("Z"), "\(table)")
        #expect(FamilyCtl.requestsJSON([row]).contains("\"expires\":\"2027-01-15T08:15:00Z\""))
    }

    @Test func statusShowsLocalTimesAndTheJSONKeepsUTC() throws {
        let row = try Guard.Authorization([
            "user": .string("alice"), "app": .string("org.example.Paint"), "member": .string("child"),
            "status": .string("approved"), "approvedBy": .string("mum"), "updatedAt": .double(1_800_000_000),
            "path": .string("/apps/p"), "lock": .string("locked"),
        ])
        let table = FamilyCtl.statusTable([row])
        #expect(table.contains(UnixTime(seconds: 1_800_000_000).localDescription), "\(table)")
        #expect(!table.contains("T08:00:00Z"), "\(table)")
        #expect(FamilyCtl.statusJSON([row]).contains("\"updatedAt\":\"2027-01-15T08:00:00Z\""))
    }

    @Test func statusShowsTheLockInWordsWithAnUnenforcedOnesReasonEscaped() throws {
        let unenforced = Guard.Authorization(user: "alice", app: "org.example.Paint", member: .child, status: .approved,
                                             updatedAt: 0, path: "/apps/p", lock: .unenforced,
                                             lockReason: "data\u{1b}[2J.txt: open for writing by process 42")
        let flatpak = Guard.Authorization(user: "alice", app: "org.example.Draw", member: .child, status: .approved,
                                          updatedAt: 0, path: "/var/lib/flatpak/app/org.example.Draw", lock: .notNeeded)
        #expect(FamilyCtl.lockText(unenforced) == "unenforced: data\\x1B[2J.txt: open for writing by process 42")
        #expect(FamilyCtl.lockText(flatpak) == "not needed: a root-owned Flatpak installation")
        let table = FamilyCtl.statusTable([unenforced, flatpak])
        #expect(table.contains("unenforced: data\\x1B[2J.txt") && table.contains("not needed: a root-owned"), "\(table)")
        #expect(FamilyCtl.statusJSON([unenforced]).contains("\"lock\":\"unenforced\""))
    }

    @Test func anOutcomeSaysWhatTheLockMeansForTheChildInWords() {
        func row(_ status: Guard.Status, _ lock: Guard.LockState, reason: String? = nil) -> Guard.Authorization {
            Guard.Authorization(user: "kid", app: "org.example.Paint", member: .child, status: status, updatedAt: 0,
                                path: "/apps/p", lock: lock, lockReason: reason)
        }
        #expect(FamilyCtl.outcomeText(row(.approved, .locked), name: "Paint\u{1b}[2J")
                == "“Paint\\x1B[2J” is approved for kid; its folder is locked, so kid cannot remove or change it")
        #expect(FamilyCtl.outcomeText(row(.approved, .unenforced, reason: "filesystem ramfs does not support it"))
                == "org.example.Paint is approved for kid, but its folder could not be locked (filesystem ramfs does not "
                + "support it): kid could still remove it")
        #expect(FamilyCtl.outcomeText(row(.approved, .notNeeded)).hasSuffix("it is installed where kid cannot remove or change it"))
        #expect(FamilyCtl.outcomeText(row(.denied, .unlocked), name: "Paint") == "“Paint” is not allowed for kid")
        #expect(!FamilyCtl.outcomeText(row(.approved, .locked)).contains("lock:"), "no word of the code's")
    }

    @Test func aVerbThatIsNoneIsAUsageError() {
        #expect(FamilyCtl.main(["frobnicate"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["approve"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["approve", "seven"]) == ExitCode.usage.rawValue)
    }

    @Test func unknownOptionsAndVerbsAreUsageErrorsNeverANoVerbMessage() {
        #expect(FamilyCtl.main(["--frobnicate"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["--frobnicate", "status"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["log", "--frobnicate"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["help", "frobnicate"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["help", "status", "log"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main([]) == ExitCode.usage.rawValue)
    }

    @Test func helpComesForEveryVerbInEveryForm() {
        #expect(FamilyCtl.main(["help"]) == ExitCode.success.rawValue)
        for verb in FamilyCtl.verbs {
            #expect(FamilyCtl.main(["help", verb.name]) == ExitCode.success.rawValue)
            #expect(FamilyCtl.main([verb.name, "--help"]) == ExitCode.success.rawValue)
            #expect(FamilyCtl.main(["-h", verb.name]) == ExitCode.success.rawValue)
            #expect(verb.help.hasPrefix("usage: familyctl \(verb.name)"), "\(verb.help)")
            #expect(verb.help.hasSuffix("See familyctl(8)."))
            // The overview names every verb, and every line fits a terminal.
            #expect(FamilyCtl.usage.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                .contains(verb.synopsis[0]))
        }
        #expect(FamilyCtl.usage.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(FamilyCtl.usage)")
        #expect(FamilyCtl.usage.contains("Exit status: 0 done"))
    }

    @Test("a verb a letter or two off is suggested", arguments: [
        ("stauts", " (did you mean status?)"), ("aprove", " (did you mean approve?)"), ("lgo", " (did you mean log?)"),
        ("frobnicate", ""),
    ])
    func suggestions(_ word: String, _ expected: String) {
        #expect(FamilyCtl.suggestion(for: word) == expected)
    }

    @Test("--since reads dates, dates with times, today, yesterday and ages")
    func sinceTimes() throws {
        let now = 1_764_547_200.0 + 3600 * 10.5  // some morning
        // Read back through the machine's own calendar: the local date and time given.
        func local(_ seconds: Double?) -> String {
            seconds.map { UnixTime(seconds: $0).localDescription } ?? "nil"
        }
        #expect(local(FamilyCtl.parseTime("2026-11-30", now: now)) == "2026-11-30 00:00:00")
        #expect(local(FamilyCtl.parseTime("2026-11-30 08:05", now: now)) == "2026-11-30 08:05:00")
        #expect(local(FamilyCtl.parseTime("2026-11-30T08:05:09", now: now)) == "2026-11-30 08:05:09")
        #expect(FamilyCtl.parseTime("90min", now: now) == now - 5400)
        #expect(FamilyCtl.parseTime("12h", now: now) == now - 43_200)
        #expect(FamilyCtl.parseTime("7d", now: now) == now - 7 * 86_400)
        #expect(FamilyCtl.parseTime("2w", now: now) == now - 14 * 86_400)
        let today = try #require(FamilyCtl.parseTime("today", now: now))
        let yesterday = try #require(FamilyCtl.parseTime("Yesterday", now: now))
        #expect(today <= now && now - today < 86_400 + 3600)
        #expect(today - yesterday >= 23 * 3600 && today - yesterday <= 25 * 3600)
        for bad in ["soon", "2026-02-31", "2026-13-01", "2026-11-30 25:00", "2026-11-30 08", "12x", "", "-5d",
                    "9999999d", "2026-11-30 08:00 extra", "1969-12-31"] {
            #expect(FamilyCtl.parseTime(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test func logRowsShowEveryFieldEscapedAndJSONKeepsThemWhole() throws {
        let event = try Guard.AuditEvent([
            "id": .int(42), "at": .double(0), "actor": .string("bob"), "action": .string("approve"),
            "user": .string("alice"), "app": .string("org.example.Paint\u{1b}]0;x"), "member": .string("child"),
            "outcome": .string("approved"), "detail": .null, "count": .int(1), "lastAt": .null,
        ])
        let table = FamilyCtl.logTable([event])
        let lines = table.split(separator: "\n")
        #expect(lines.first?.hasPrefix("TIME") == true)
        #expect(lines.count == 2)
        #expect(lines[1].contains("bob") && lines[1].contains("approve") && lines[1].contains("alice")
                && lines[1].contains("org.example.Paint\\x1B]0;x") && lines[1].contains("approved"))
        #expect(!table.unicodeScalars.contains { $0.value == 0x1b })
        let json = FamilyCtl.logJSON([event])
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let events = object?["events"] as? [[String: Any]] ?? []
        #expect(events.count == 1)
        #expect(events.first?["at"] as? String == "1970-01-01T00:00:00Z")
        #expect(events.first?["app"] as? String == "org.example.Paint\u{1b}]0;x")
        #expect(events.first?["detail"] is NSNull)
        #expect(Set(events.first?.keys.map { $0 } ?? []) == ["id", "at", "actor", "action", "user", "app", "member", "outcome",
                                                             "detail", "count", "lastAt"])
        #expect(events.first?["count"] as? Int == 1)
        #expect(events.first?["lastAt"] is NSNull)
    }

    @Test func aRepeatedEventSaysHowOftenAndWhenLastInTheTableAndTheJSON() throws {
        let event = try Guard.AuditEvent([
            "id": .int(7), "at": .double(0), "actor": .string("alice"), "action": .string("revoke"),
            "user": .string("alice"), "app": .string("org.example.Paint"), "member": .null,
            "outcome": .string("noEffect"), "detail": .string("not approved"), "count": .int(1500), "lastAt": .double(90),
        ])
        let row = FamilyCtl.logTable([event]).split(separator: "\n")[1]
        #expect(row.hasSuffix("not approved (repeated 1500 times, the last at \(UnixTime(seconds: 90).localDescription))"), "\(row)")
        #expect(row.contains(" no effect "), "the outcome in words: \(row)")
        let object = try? JSONSerialization.jsonObject(with: Data(FamilyCtl.logJSON([event]).utf8)) as? [String: Any]
        let json = (object?["events"] as? [[String: Any]])?.first
        #expect(json?["count"] as? Int == 1500)
        #expect(json?["lastAt"] as? String == "1970-01-01T00:01:30Z")
    }

    @Test func logRefusesBadOptionsBeforeCallingTheGuard() {
        for arguments in [["log", "--since", "soon"], ["log", "--limit", "0"], ["log", "--limit", "2001"],
                          ["log", "alice"], ["log", "--user"]] {
            #expect(FamilyCtl.main(arguments + ["--socket", "/nonexistent/socket"]) == ExitCode.usage.rawValue, "\(arguments)")
        }
    }

    @Test func everyVerbIsInTheManualAndTheCompletion() throws {
        let manual = try String(contentsOfFile: "\(packageRoot)/Config/man/familyctl.8", encoding: .utf8)
        let completion = try String(contentsOfFile: "\(packageRoot)/Config/completion/familyctl.bash", encoding: .utf8)
        for verb in FamilyCtl.verbs {
            #expect(manual.contains("\\fB\(verb.name)\\fP") || manual.contains(".BR \(verb.name) ")
                    || manual.contains(".BR \"\(verb.name) ") || manual.contains(".BI \"\(verb.name) "),
                    "familyctl(8) has no entry for \(verb.name)")
            #expect(completion.contains(" \(verb.name) ") || completion.contains("\"\(verb.name) "),
                    "the completion does not offer \(verb.name)")
        }
    }
}

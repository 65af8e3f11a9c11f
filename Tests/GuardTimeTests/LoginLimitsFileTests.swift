import Foundation
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// The login-limits file the PAM module reads: the contract's exact format,
/// written atomically, root's alone.
@Suite struct LoginLimitsFileTests {
    static var localIsUTC: Bool { TimeZone.current.secondsFromGMT() == 0 }

    private func demo(uid: UInt32 = 1001, day: String = "2026-12-05", extra: Int = 600) throws -> ChildTimeLimits {
        ChildTimeLimits(uid: uid, user: "alice",
                        limits: TimeLimits(hours: try LoginHours(parsing: "Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00"),
                                           daily: try SessionDuration(parsing: "90m"), atEnd: .lock),
                        appNames: ["FamilyControls Demo", "Paint"], day: day, extraSeconds: extra, openUntil: 1_765_000_000.5)
    }

    @Test func eachChildWithLimitsHasOneLineInTheContractsFormat() throws {
        let hoursOnly = ChildTimeLimits(uid: 1003, user: "carol", limits: TimeLimits(hours: try LoginHours(parsing: "Sat 10:00-11:00")),
                                        appNames: ["Demo"], day: "2026-12-05")
        let none = ChildTimeLimits(uid: 1004, user: "dan", limits: TimeLimits(), appNames: ["Demo"], day: "2026-12-05")
        let dailyOnly = ChildTimeLimits(uid: 1002, user: "bob", limits: TimeLimits(daily: SessionDuration(seconds: 45), atEnd: .end),
                                        appNames: ["Demo"], day: "2026-12-04", extraSeconds: 300)
        let text = LoginLimitsFile.text([hoursOnly, none, try demo(), dailyOnly], used: [1001: 120, 1002: 50],
                                        day: "2026-12-05", at: UnixTime(seconds: 1_764_969_240))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 6, "\(lines)")
        #expect(lines[0] == "familycontrols-login-limits 1")
        #expect(lines[1].hasPrefix("# written by familycontrolsd at 2025-12-0") && lines[1].hasSuffix("; do not edit"))
        #expect(lines[2] == "child 1001 2026-12-05 120 5400 600 0730-2000/0730-2000/0730-2000/0730-2000/0730-2000/0900-2100/0900-2100 1765000000 FamilyControls Demo, Paint")
        // Extra time given for another day counts for nothing today.
        #expect(lines[3] == "child 1002 2026-12-05 50 45 0 - 0 Demo")
        #expect(lines[4] == "child 1003 2026-12-05 0 - 0 none/none/none/none/none/1000-1100/none 0 Demo")
        #expect(lines[5] == "")
        // 2025-12-05 21:14:00 UTC, in local time with its offset.
        if LoginLimitsFileTests.localIsUTC {
            #expect(lines[1] == "# written by familycontrolsd at 2025-12-05T21:14:00+0000; do not edit")
        }
        #expect(text.utf8.allSatisfy { $0 == 0x0A || (0x20..<0x7F).contains($0) })
    }

    @Test func anAppsNameCannotBreakALineOrMakeItTooLong() throws {
        var child = try demo()
        child.appNames = ["Evil\nchild 1001 2026-12-05 0 - 0 - 0 x", String(repeating: "é", count: 5000)]
        let text = LoginLimitsFile.text([child], used: [:], day: "2026-12-05", at: .now)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.utf8.count <= LoginLimitsFile.lineLimit })
        #expect(lines[2].contains("Evil\\x0Achild"))
    }

    @Test func theFileIsReplacedAtomicallyRootsAloneMode0600() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + LoginLimitsFile.name
        try LoginLimitsFile.write("old\n", to: path)
        // A reader holding the old file keeps it whole: the new one is another inode.
        let before = try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int
        let text = LoginLimitsFile.text([try demo()], used: [1001: 7], day: "2026-12-05", at: .now)
        try LoginLimitsFile.write(text, to: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.systemFileNumber] as? Int != before)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.ownerAccountID] as? Int) == Int(getuid()))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [LoginLimitsFile.name])
    }

    @Test func aNewDayStartsTheFileFromNothing() throws {
        // The counter moves into the new day; the file says that day, and only its time.
        let now = UnixTime.now
        let moment = LocalMoment(now)
        let midnight = now.seconds - Double(moment.minute * 60 + moment.second) + 86_400
        let tomorrow = LocalMoment(UnixTime(seconds: midnight + 30)).day
        var counter = TimeCounter(day: moment.day, used: [1001: 5000])
        _ = counter.advance(to: UnixTime(seconds: midnight - 10), elapsed: 0, open: [1001])
        let finished = counter.advance(to: UnixTime(seconds: midnight + 30), elapsed: 40, open: [1001])
        #expect(finished?.used == [1001: 5010])
        let text = LoginLimitsFile.text([try demo(day: moment.day)], used: counter.wholeSeconds, day: counter.day,
                                        at: UnixTime(seconds: midnight + 30))
        #expect(text.contains("\nchild 1001 \(tomorrow) 30 5400 0 "), "\(text)")
    }
}

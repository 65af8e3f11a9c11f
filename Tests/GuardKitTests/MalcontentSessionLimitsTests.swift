import Foundation
@testable import GuardDiagnostics
import Testing

/// GNOME's parental controls' session limits, as AccountsService keeps them for a user.
struct MalcontentSessionLimitsTests {
    private func withFolder(_ files: [String: String], _ body: (String) throws -> Void) throws {
        let folder = NSTemporaryDirectory() + "accounts-\(getpid())-\(Int.random(in: 0..<1_000_000))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (name, text) in files { try text.write(toFile: "\(folder)/\(name)", atomically: true, encoding: .utf8) }
        try body(folder)
    }

    @Test func aDailyScheduleIsSeenAndNoLimitOrAnotherGroupIsNot() throws {
        try withFolder([
            "ana": "[User]\nSession=gnome\n\n[com.endlessm.ParentalControls.SessionLimits]\nLimitType=uint32 1\nDailySchedule=(28800, 72000)\n",
            "ben": "[com.endlessm.ParentalControls.SessionLimits]\nLimitType=0\n",
            "cai": "[User]\nLimitType=1\n",
        ]) { folder in
            #expect(MalcontentSessionLimits.areSet(for: "ana", in: folder))
            #expect(!MalcontentSessionLimits.areSet(for: "ben", in: folder), "no limit")
            #expect(!MalcontentSessionLimits.areSet(for: "cai", in: folder), "another group's key")
            #expect(!MalcontentSessionLimits.areSet(for: "dee", in: folder), "no file")
            #expect(!MalcontentSessionLimits.areSet(for: "../ana", in: folder), "a name that is a path")
            let findings = MalcontentSessionLimits.findings(children: ["ben", "ana"], in: folder)
            #expect(findings.map(\.file) == ["\(folder)/ana"])
            #expect(findings.first?.severity == .warning)
            #expect(findings.first?.message.contains("ana has GNOME parental controls' session limits (malcontent)") == true)
        }
    }
}

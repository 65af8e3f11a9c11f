import Foundation
@testable import GuardKit
import SystemKit
import Testing
import TestSupport
@testable import GuardDiagnostics

/// The doas.conf reader behind `--check-config`'s doas findings, on files
/// written by the test, for a real account (this process's own user) and root.
@Suite struct DoasRulesTests {
    private func rules(_ text: String) throws -> (DoasRules, String) {
        try withTemporaryDirectorySync { directory in
            let path = "\(directory)/doas.conf"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return (DoasRules(paths: [path, "\(directory)/absent.conf"]), path)
        }
    }

    private var me: UserAccount {
        get throws { try #require(try UserDatabase.user(id: geteuid())) }
    }

    private var root: UserAccount {
        get throws { try #require(try UserDatabase.user(id: 0)) }
    }

    /// What each file lets this user do as root: every command, some, or nothing.
    @Test(arguments: [
        ("permit nopass ME as root", "every"),
        ("permit ME", "every"),
        ("permit persist keepenv setenv { PATH HOME=/x } :GROUP", "every"),
        ("permit #UID as root", "nothing"),
        ("permit UID as 0", "every"),
        ("permit nopass ME as root cmd /usr/bin/true", "some"),
        ("permit nopass ME as root cmd /usr/bin/true args", "some"),
        ("permit ME as root\ndeny ME as root", "nothing"),
        ("deny ME\npermit ME as root", "every"),
        ("permit ME as root cmd /usr/bin/id\ndeny ME", "nothing"),
        ("permit ME as root cmd /usr/bin/id\ndeny ME cmd /usr/bin/id", "nothing"),
        ("permit nobody as root", "nothing"),
        ("permit ME as nobody", "nothing"),
        ("# permit ME as root", "nothing"),
        ("permit nopass \\\n  ME as root", "every"),
        ("permit nopass \"ME\" as root # a comment", "every"),
    ])
    func whatARuleGrantsAsRoot(text: String, expected: String) throws {
        let account = try me
        let group = try #require(try UserDatabase.group(id: account.gid)).name
        let written = text.replacing("ME", with: account.name).replacing("#UID", with: "#\(account.uid)")
            .replacing("UID", with: String(account.uid)).replacing(":GROUP", with: ":\(group)")
        let (doas, _) = try rules(written + "\n")
        let grants = doas.grants(account, groups: GroupMembership(account), as: try root)
        let found = grants.everyCommand != nil ? "every" : grants.someCommands.isEmpty ? "nothing" : "some"
        #expect(found == expected, "\(written)")
    }

    @Test func aRuleSaysWhereItIsWrittenAndWhatItSays() throws {
        let account = try me
        let (doas, path) = try rules("# doas.conf\n\npermit nopass keepenv \(account.name)   as root\npermit :wheel cmd /usr/bin/id args -u\n")
        #expect(doas.rules.count == 2)
        #expect(doas.rules[0] == DoasRules.Rule(file: path, line: 3, permit: true, identity: account.name, target: "root",
                                               command: nil, text: "permit nopass keepenv \(account.name) as root"))
        #expect(doas.rules[1].identity == ":wheel" && doas.rules[1].target == nil && doas.rules[1].command == "/usr/bin/id")
        #expect(doas.unreadable.isEmpty, "an absent file is no doas, not an unreadable one")
    }

    @Test func anUnreadableFileIsReportedNotSkipped() throws {
        try withTemporaryDirectorySync { directory in
            let folder = "\(directory)/doas.conf"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let doas = DoasRules(paths: [folder])
            #expect(doas.unreadable.map(\.file) == [folder])
            #expect(doas.unreadable.first?.error.rawValue == EISDIR)
        }
    }
}

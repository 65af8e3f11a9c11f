import Foundation
@testable import GuardKit
import SystemKit
import Testing
import TestSupport
@testable import GuardDiagnostics

/// The sudoers reader behind `--check-config`'s sudo findings, on files
/// written by the test, for a real account (this process's own user).
@Suite struct SudoersRulesTests {
    private func rules(_ text: String, extra: [String: String] = [:]) throws -> (SudoersRules, String) {
        try withTemporaryDirectorySync { directory in
            for (name, body) in extra { try body.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
            let path = "\(directory)/sudoers"
            try text.replacing("DIR", with: directory).write(toFile: path, atomically: true, encoding: .utf8)
            return (SudoersRules(path: path), path)
        }
    }

    private var me: UserAccount {
        get throws { try #require(try UserDatabase.user(id: geteuid())) }
    }

    @Test(arguments: [
        ("ME ALL=(ALL:ALL) ALL", true),
        ("User_Alias KIDS = nobody, ME\nKIDS ALL = ALL", true),
        ("ALL, !ME ALL=(ALL) ALL", false),
        ("#UID ALL=(ALL) ALL", true),
        ("%#GID ALL=(ALL) ALL", true),
        ("nobody ALL=(ALL) ALL # ME", false),
        ("nobody,\\\n ME ALL=(ALL) ALL", true),
    ])
    func whoARuleNames(line: String, includesMe: Bool) throws {
        let account = try me
        let text = line.replacing("ME", with: account.name).replacing("#UID", with: "#\(account.uid)")
            .replacing("%#GID", with: "%#\(account.gid)")
        let (sudoers, _) = try rules(text + "\n")
        let named = sudoers.rules.contains { sudoers.includes($0.users, user: account, groups: GroupMembership(account)) }
        #expect(named == includesMe, "\(text)")
    }

    @Test func commandsRunAsAndIncludesAreRead() throws {
        let account = try me
        let (sudoers, path) = try rules("""
            Defaults env_reset
            Cmnd_Alias EVERYTHING = ALL
            @include DIR/more
            """, extra: ["more": "\(account.name) host1 = (:wheel) ALL, (root) NOPASSWD: /usr/bin/true\n\(account.name) ALL = EVERYTHING\n"])
        #expect(sudoers.rules.map(\.line) == [1, 1, 2])
        #expect(sudoers.rules.allSatisfy { $0.file == path.replacing("sudoers", with: "more") })
        #expect(sudoers.rules[0].runAs == [], "(:group) runs as the caller")
        #expect(sudoers.rules[1].runAs == ["root"] && sudoers.rules[1].commands == ["/usr/bin/true"])
        #expect(!sudoers.allowsEveryCommand(sudoers.rules[1].commands))
        #expect(sudoers.rules[2].runAs == nil && sudoers.allowsEveryCommand(sudoers.rules[2].commands))
    }
}

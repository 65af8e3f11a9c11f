import Foundation
import SystemKit
import Testing
import TestSupport
@testable import GuardDiagnostics

/// `--check-config`'s reading of polkit: every way its local authority's
/// files and its rules name a user or a group the user is in is a mention,
/// with its file and line; comments, other files and other users are not.
@Suite struct PolkitIdentitiesTests {
    @Test func everyWayARuleOrAnAuthorityNamesAUserOrItsGroupIsAMentionWithItsFileAndLine() throws {
        try withTemporaryDirectorySync { directory in
            let rules = "\(directory)/rules.d", authority = "\(directory)/localauthority.conf.d"
            for folder in [rules, authority] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false) }
            try """
                // unix-user:root in a comment is no rule
                polkit.addAdminRule(function(action, subject) {
                    return ["unix-user:root"];
                });
                polkit.addRule(function(action, subject) {
                    if (subject.isInGroup("root") || subject.user == "root") { return polkit.Result.YES; }
                });
                polkit.addAdminRule(function(action, subject) { return ["unix-user:fcsomeoneelse"]; });
                """.write(toFile: "\(rules)/49-kid.rules", atomically: true, encoding: .utf8)
            try "polkit.addAdminRule(function(action, subject) { return [\"unix-user:root\"]; });\n"
                .write(toFile: "\(rules)/README", atomically: true, encoding: .utf8)
            try "[Configuration]\nAdminIdentities=unix-group:root;unix-user:0\n"
                .write(toFile: "\(authority)/50-admins.conf", atomically: true, encoding: .utf8)
            var sources = ChildPrivilegeCheck.Sources()
            sources.polkitRules = [rules]
            sources.polkitAuthorities = [authority]
            let identities = PolkitIdentities(sources: sources)

            let root = UserAccount(name: "root", uid: 0, gid: 0, home: "/root", shell: "/bin/sh")
            let mentions = identities.mentions(of: root, groups: GroupMembership(root))
            #expect(mentions.map { "\($0.file.split(separator: "/").last ?? ""):\($0.line)" }.sorted()
                    == ["49-kid.rules:3", "49-kid.rules:6", "49-kid.rules:6", "50-admins.conf:2", "50-admins.conf:2"],
                    "\(mentions.map(\.way))")
            #expect(Set(mentions.map(\.way)) == ["polkit rule names unix-user:root", "polkit rule names unix-group:root",
                                                 "polkit AdminIdentities= unix-group:root", "polkit AdminIdentities= unix-user:0"],
                    "\(mentions.map(\.way))")

            let stranger = UserAccount(name: "fcnosuchuser", uid: 64_999, gid: 64_999, home: "/", shell: "/bin/sh")
            #expect(identities.mentions(of: stranger, groups: GroupMembership(stranger)).isEmpty)
        }
    }
}

import Foundation
import FamilyConfiguration
import SystemKit
import Testing
import TestSupport

@Suite struct GuardConfigurationTests {
    private func parse(_ text: String) throws(ConfigError) -> GuardConfiguration {
        try GuardConfiguration(parsing: text, path: "test.conf")
    }

    private func error(_ text: String) -> ConfigError? {
        do throws(ConfigError) {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func shippedFileParsesToTheEmbeddedDefaults() throws {
        let shipped = try GuardConfiguration.load(path: "\(packageRoot)/Config/familycontrols.conf")
        #expect(shipped == GuardConfiguration())
    }

    @Test func everyKeyIsRead() throws {
        let configuration = try parse("""
            # a comment
            ; another
            [Family]
            Guardians=bob @parents        # users, or @group resolved through NSS
            Children=alice @kids

            [Child alice]
            Guardians=carol

            [Apps]
            Roots=/home/%u/Applications /opt/familycontrols/apps/%u   # %u = the child's user name

            [Authentication]
            GuardianService=site-guardian
            IndividualService=site-individual
            PromptTimeout=2min
            MaxAttempts=5
            FailureDelay=1min
            GuardianTimeout=10min         # one guardian authentication covers that terminal session this long

            [Locks]
            VerifyInterval=30s
            """)
        #expect(configuration.guardians == [.user("bob"), .group("parents")])
        #expect(configuration.children == [.user("alice"), .group("kids")])
        #expect(configuration.childGuardians == ["alice": [.user("carol")]])
        #expect(configuration.appRoots == ["/home/%u/Applications", "/opt/familycontrols/apps/%u"])
        #expect(configuration.guardianService == "site-guardian")
        #expect(configuration.individualService == "site-individual")
        #expect(configuration.promptTimeout == .seconds(120))
        #expect(configuration.maxAttempts == 5)
        #expect(configuration.failureDelay == .seconds(60))
        #expect(configuration.lockVerifyInterval == .seconds(30))
        #expect(configuration.guardianTimeout == .seconds(600))
    }

    @Test func failureDelayDefaultsToThirtySecondsAndZeroTurnsItOff() throws {
        #expect(try parse("[Authentication]\n").failureDelay == .seconds(30))
        #expect(try parse("[Authentication]\n").pendingTimeout == .seconds(900))
        #expect(try parse("[Authentication]\nPendingTimeout=2h\n").pendingTimeout == .seconds(7200))
        #expect(try parse("[Authentication]\n").inSessionApproval == false)
        #expect(try parse("[Authentication]\nInSessionApproval=yes\n").inSessionApproval == true)
        #expect(try parse("[Authentication]\nInSessionApproval=off\n").inSessionApproval == false)
        #expect(try parse("[Authentication]\n").inSessionApprovalSetting == nil)
        #expect(try parse("[Authentication]\nInSessionApproval=code\n").inSessionApprovalSetting == .code)
        #expect(try parse("[Authentication]\nInSessionApproval=no\n").inSessionApprovalSetting == InSessionApproval.no)
        #expect(try parse("[Authentication]\n").guardianCodeService == "familycontrols-guardian-code")
        #expect(try parse("[Authentication]\n").guardianCodeFile == "/etc/familycontrols/oath/users.oath")
        #expect(try parse("[Authentication]\nGuardianCodeFile=/var/lib/x/users.oath\n").guardianCodeFile == "/var/lib/x/users.oath")
        #expect(try parse("[Authentication]\nFailureDelay=0\n").failureDelay == .zero)
        #expect(try parse("[Authentication]\nFailureDelay=1500ms\n").failureDelay == .milliseconds(1500))
    }

    @Test func guardianTimeoutDefaultsToFiveMinutesAndZeroAlwaysAsks() throws {
        #expect(try parse("[Authentication]\n").guardianTimeout == .seconds(300))
        #expect(try parse("[Authentication]\nGuardianTimeout=0\n").guardianTimeout == .zero)
        #expect(try parse("[Authentication]\nGuardianTimeout=15min\n").guardianTimeout == .seconds(900))
    }

    @Test func repeatedListKeysAddAndEmptyClears() throws {
        let configuration = try parse("""
            [Family]
            Children=alice
            Children=bob alice
            Guardians=carol
            Guardians=
            Guardians=dave
            """)
        #expect(configuration.children == [.user("alice"), .user("bob")])
        #expect(configuration.guardians == [.user("dave")])
    }

    // The next two tests hold inputs the config fuzz target (Tests/Fuzz) stopped on.

    @Test func crlfLineEndingsReadLikeLF() throws {
        // "\r\n" is one Character in Swift: the file read as one long header.
        #expect(error("[Apps]\r\nRoots=/home/../%u\r\n")
            == ConfigError(file: "test.conf", line: 2, "Roots= must not contain . or .. components, found \"/home/../%u\""))
        let configuration = try parse("[Family]\r\nGuardians=bob\r\nChildren=alice\r\n\r\n[Apps]\r\nRoots=/srv/%u\r\n")
        #expect(configuration.guardians == [.user("bob")])
        #expect(configuration.children == [.user("alice")])
        #expect(configuration.appRoots == ["/srv/%u"])
    }

    @Test func aRootsLineGivenAgainAddsEvenToRootsEqualToTheDefaults() throws {
        // Roots= once replaces the embedded defaults; given again, it adds.
        // A list that happened to equal the defaults was replaced instead.
        // Family lists given twice add up the same way.
        let configuration = try parse("""
            [Family]
            Guardians=bob @parents
            Children=alice @kids
            [Apps]
            Roots=/home/%u/Applications /opt/familycontrols/apps/%u
            [Family]
            Guardians=zz-guardian
            Children=@zz-kids
            [Apps]
            Roots=/srv/zz/%u
            """)
        #expect(configuration.appRoots == ["/home/%u/Applications", "/opt/familycontrols/apps/%u", "/srv/zz/%u"])
        #expect(configuration.guardians == [.user("bob"), .group("parents"), .user("zz-guardian")])
        #expect(configuration.children == [.user("alice"), .group("kids"), .group("zz-kids")])
        #expect(try parse("[Apps]\nRoots=/srv/%u\n").appRoots == ["/srv/%u"])
        #expect(try parse("[Apps]\nRoots=\nRoots=/srv/%u\n").appRoots == ["/srv/%u"])
    }

    @Test(arguments: [("30", 30), ("45s", 45), ("1min", 60), ("2m", 120), ("1h", 3600), ("1500ms", 1)])
    func timeoutsAcceptUnits(text: String, seconds: Int) throws {
        let configuration = try parse("[Authentication]\nPromptTimeout=\(text)\n")
        #expect(configuration.promptTimeout.components.seconds == Int64(seconds))
    }

    @Test(arguments: [("90d", 90), ("26w", 182), ("2y", 730), ("1 year", 365), ("1D", 1), ("100y", 36_500)])
    func auditRetentionAcceptsDaysWeeksAndYears(text: String, days: Int) throws {
        let configuration = try parse("[Audit]\nRetention=\(text)\n")
        #expect(configuration.auditRetention == .seconds(days * 86_400))
    }

    @Test func lockVerifyIntervalDefaultsToAnHourAndZeroTurnsItOff() throws {
        #expect(try parse("").lockVerifyInterval == .seconds(3600))
        #expect(try parse("[Locks]\nVerifyInterval=15min\n").lockVerifyInterval == .seconds(900))
        #expect(try parse("[Locks]\nVerifyInterval=2s\n").lockVerifyInterval == .seconds(2))
        #expect(try parse("[Locks]\nVerifyInterval=0\n").lockVerifyInterval == nil)
        #expect(try parse("[Locks]\nVerifyInterval=off\n").lockVerifyInterval == nil)
    }

    @Test func auditRetentionDefaultsToAYearAndInfinityKeepsEverything() throws {
        #expect(try parse("").auditRetention == .seconds(365 * 86_400))
        #expect(try parse("[Audit]\nRetention=infinity\n").auditRetention == nil)
    }

    @Test(arguments: [
        ("[Family]\nGuardian=bob\n", 2, "unknown key \"Guardian\" in [Family] (expected Guardians, Children or ApprovedApps)"),
        ("[Family]\nChildren=alice\n[Famly]\n", 3, "unknown section [Famly] (expected [Family], [Family NAME], [Child NAME], [Apps], [Authentication], [Audit], [Locks], [Limits], [Flatpak], [Monitors] or [Updates])"),
        ("Children=alice\n", 1, "Children= appears before any [Section] header"),
        ("[Family]\nChildren alice\n", 2, "expected Key=Value or [Section], found \"Children alice\""),
        ("[Family\n", 1, "expected a section header like [Family], found \"[Family\""),
        ("\n\n[Family]\nChildren=al/ice\n", 4, "Children= expects user names or @group names, found \"al/ice\""),
        ("[Family]\nGuardians=@\n", 2, "Guardians= expects user names or @group names, found \"@\""),
        ("[Child]\n", 1, "[Child] needs a user name: [Child alice]"),
        ("[Child ../x]\n", 1, "\"../x\" in [Child ../x] is not a valid user name"),
        ("[Child alice]\nChildren=bob\n", 2, "unknown key \"Children\" in [Child alice] (expected Guardians)"),
        ("[Apps x]\n", 1, "[Apps] takes no argument, found \"x\""),
        ("[Apps]\nRoots=relative/%u\n", 2, "Roots= expects absolute paths, found \"relative/%u\""),
        ("[Apps]\nRoots=/home/%x/Apps\n", 2, "Roots= knows only %u (user name), %h (home) and %%, found \"/home/%x/Apps\""),
        ("[Apps]\nRoots=/home/%u/../etc\n", 2, "Roots= must not contain . or .. components, found \"/home/%u/../etc\""),
        ("[Apps]\nRoot=/x\n", 2, "unknown key \"Root\" in [Apps] (expected Roots)"),
        ("[Authentication]\nGuardianService=../../etc/passwd\n", 2, "GuardianService= expects a pam.d service name (letters, digits, _ . -), found \"../../etc/passwd\""),
        ("[Authentication]\nIndividualService=\n", 2, "IndividualService= expects a pam.d service name (letters, digits, _ . -), found \"\""),
        ("[Authentication]\nPromptTimeout=soon\n", 2, "PromptTimeout= expects a time such as 60s, 2min or 1h, found \"soon\""),
        ("[Authentication]\nPromptTimeout=0\n", 2, "PromptTimeout= must be between 1s and 1h, found \"0\""),
        ("[Authentication]\nPendingTimeout=5s\n", 2, "PendingTimeout= must be between 10s and 24h, found \"5s\""),
        ("[Authentication]\nPendingTimeout=25h\n", 2, "PendingTimeout= must be between 10s and 24h, found \"25h\""),
        ("[Authentication]\nGuardianCodeFile=users.oath\n", 2, "GuardianCodeFile= expects an absolute file path, found \"users.oath\""),
        ("[Authentication]\nInSessionApproval=maybe\n", 2, "InSessionApproval= expects yes, no or code, found \"maybe\""),
        ("[Authentication]\nPromptTimeout=2h\n", 2, "PromptTimeout= must be between 1s and 1h, found \"2h\""),
        ("[Authentication]\nMaxAttempts=0\n", 2, "MaxAttempts= expects a whole number from 1 to 10, found \"0\""),
        ("[Authentication]\nMaxAttempts=many\n", 2, "MaxAttempts= expects a whole number from 1 to 10, found \"many\""),
        ("[Authentication]\nTimeout=1\n", 2, "unknown key \"Timeout\" in [Authentication] (expected GuardianService, IndividualService, PromptTimeout, MaxAttempts, FailureDelay, PendingTimeout, GuardianTimeout, InSessionApproval, GuardianCodeService or GuardianCodeFile)"),
        ("[Authentication]\nGuardianTimeout=2h\n", 2, "GuardianTimeout= must be between 0 and 1h, found \"2h\""),
        ("[Authentication]\nGuardianTimeout=later\n", 2, "GuardianTimeout= expects a time such as 60s, 2min or 1h, found \"later\""),
        ("[Authentication]\nFailureDelay=2h\n", 2, "FailureDelay= must be between 0 and 1h, found \"2h\""),
        ("[Authentication]\nFailureDelay=-1\n", 2, "FailureDelay= expects a time such as 60s, 2min or 1h, found \"-1\""),
        ("[Audit]\nRetention=0d\n", 2, "Retention= must be between 1d and 100y, or infinity, found \"0d\""),
        ("[Audit]\nRetention=101y\n", 2, "Retention= must be between 1d and 100y, or infinity, found \"101y\""),
        ("[Audit]\nRetention=forever\n", 2, "Retention= expects a time such as 90d, 26w or 2y, or infinity, found \"forever\""),
        ("[Audit]\nRetention=12h\n", 2, "Retention= expects a time such as 90d, 26w or 2y, or infinity, found \"12h\""),
        ("[Audit]\nKeep=1d\n", 2, "unknown key \"Keep\" in [Audit] (expected Retention)"),
        ("[Family]\n=bob\n", 2, "expected a key made of letters and digits before \"=\", found \"\""),
        ("[Locks]\nVerifyInterval=500ms\n", 2, "VerifyInterval= must be 0 (off) or between 1s and 24h, found \"500ms\""),
        ("[Locks]\nVerifyInterval=25h\n", 2, "VerifyInterval= must be between 0 and 24h, found \"25h\""),
        ("[Locks]\nVerifyInterval=often\n", 2, "VerifyInterval= expects a time such as 60s, 2min or 1h, found \"often\""),
        ("[Locks]\nInterval=1h\n", 2, "unknown key \"Interval\" in [Locks] (expected VerifyInterval)"),
        ("[Locks x]\n", 1, "[Locks] takes no argument, found \"x\""),
    ])
    func malformedFilesNameLineAndExpectation(text: String, line: Int, message: String) {
        let failure = error(text)
        #expect(failure == ConfigError(file: "test.conf", line: line, message))
        #expect(failure?.description == "test.conf:\(line): \(message)")
    }

    @Test func missingFileIsAnErrorExceptAtTheDefaultPath() throws {
        let path = "/nonexistent/\(UUID().uuidString).conf"
        #expect(throws: ConfigError(file: path, line: 0, "no such file")) {
            try GuardConfiguration.load(path: path)
        }
    }

    @Test func binaryGarbageIsRefused() throws {
        try withTemporaryDirectorySync { directory in
            let path = "\(directory)/bad.conf"
            try Data([0xff, 0xfe, 0x00, 0x41]).write(to: URL(fileURLWithPath: path))
            #expect(throws: ConfigError(file: path, line: 0, "not valid UTF-8 text")) {
                try GuardConfiguration.load(path: path)
            }
        }
    }

    @Test func appRootsExpandPerUser() {
        let account = UserAccount(name: "alice", uid: 1001, gid: 1001, home: "/srv/home/alice/", shell: "/bin/sh")
        let family = Family(configuration: GuardConfiguration())
        #expect(family.appRoots(for: account) == ["/home/alice/Applications", "/opt/familycontrols/apps/alice"])
        #expect(AppRootTemplate.expand("%h/Apps/", for: account) == "/srv/home/alice/Apps")
        #expect(AppRootTemplate.expand("/x/100%%/%u", for: account) == "/x/100%/alice")
    }
}

/// Family membership through real NSS users and groups.
@Suite(.serialized, .enabled(if: canManageUsers, "needs root to create throwaway users and groups"))
struct FamilyMembershipTests {
    @Test func groupsExpandThroughNSS() async throws {
        try await withThrowawayUser(prefix: "c", password: false) { child in
            try await withThrowawayUser(prefix: "g", password: false) { guardian in
                try await withThrowawayUser(prefix: "o", password: false) { outsider in
                    try await withThrowawayGroup(members: [child.name]) { kids in
                        try await withThrowawayGroup(members: [guardian.name]) { parents in
                            let configuration = try GuardConfiguration(parsing: """
                                [Family]
                                Guardians=@\(parents)
                                Children=@\(kids)
                                """, path: "t.conf")
                            let family = Family(configuration: configuration)
                            let childAccount = try #require(try UserDatabase.user(named: child.name))
                            let guardianAccount = try #require(try UserDatabase.user(named: guardian.name))
                            let outsiderAccount = try #require(try UserDatabase.user(named: outsider.name))
                            #expect(try family.isChild(childAccount))
                            #expect(try !family.isChild(guardianAccount))
                            #expect(try !family.isChild(outsiderAccount))
                            #expect(try family.isGuardian(guardianAccount, of: child.name))
                            #expect(try !family.isGuardian(outsiderAccount, of: child.name))
                            #expect(try !family.isGuardian(childAccount, of: child.name))
                        }
                    }
                }
            }
        }
    }

    @Test func primaryGroupCountsAsMembership() async throws {
        try await withThrowawayUser(prefix: "c", password: false) { child in
            // useradd -U gave the child a primary group named after it, with no listed members.
            let configuration = try GuardConfiguration(parsing: "[Family]\nChildren=@\(child.name)\n", path: "t.conf")
            let account = try #require(try UserDatabase.user(named: child.name))
            #expect(try Family(configuration: configuration).isChild(account))
        }
    }

    @Test func perChildGuardiansReplaceTheFamilys() async throws {
        try await withThrowawayUser(prefix: "c", password: false) { child in
            try await withThrowawayUser(prefix: "g", password: false) { familyGuardian in
                try await withThrowawayUser(prefix: "g", password: false) { ownGuardian in
                    let configuration = try GuardConfiguration(parsing: """
                        [Family]
                        Guardians=\(familyGuardian.name)
                        Children=\(child.name)
                        [Child \(child.name)]
                        Guardians=\(ownGuardian.name)
                        """, path: "t.conf")
                    let family = Family(configuration: configuration)
                    let own = try #require(try UserDatabase.user(named: ownGuardian.name))
                    let other = try #require(try UserDatabase.user(named: familyGuardian.name))
                    #expect(try family.isGuardian(own, of: child.name))
                    #expect(try !family.isGuardian(other, of: child.name))
                    // Both are named somewhere; the child, guardian of no one, is not.
                    let childAccount = try #require(try UserDatabase.user(named: child.name))
                    #expect(try family.guardsSomeone(own) && family.guardsSomeone(other))
                    #expect(try !family.guardsSomeone(childAccount))
                    // An adult, however listed as a guardian, guards no adult.
                    #expect(try !family.isGuardian(other, of: ownGuardian.name))
                }
            }
        }
    }
}

@Suite struct FlatpakConfigurationTests {
    private func parse(_ text: String) throws(ConfigError) -> GuardConfiguration {
        try GuardConfiguration(parsing: text, path: "test.conf")
    }

    @Test func bothInstallationsAreRecognisedWithNoConfiguration() throws {
        let configuration = try parse("[Family]\nChildren=alice\n")
        #expect(configuration.flatpakUserInstallations)
        #expect(configuration.flatpakSystemInstallation)
        #expect(configuration.flatpakInstallations.isEmpty)
    }

    @Test func eachInstallationCanBeTurnedOffAndFurtherOnesListed() throws {
        let configuration = try parse("""
            [Flatpak]
            UserInstallations=no
            SystemInstallation=off
            Installations=/var/lib/flatpak-school /srv/flatpak
            Installations=/srv/flatpak /srv/more
            """)
        #expect(!configuration.flatpakUserInstallations)
        #expect(!configuration.flatpakSystemInstallation)
        #expect(configuration.flatpakInstallations == ["/var/lib/flatpak-school", "/srv/flatpak", "/srv/more"])
        #expect(try parse("[Flatpak]\nInstallations=/srv/a\nInstallations=\n").flatpakInstallations.isEmpty)
    }

    @Test(arguments: ["relative/flatpak", "/", "/srv/../etc", "/srv//flatpak", "/srv/flatpak/", "/srv/./flatpak"])
    func anInstallationThatIsNotOneNormalizedAbsoluteFolderIsRefused(_ value: String) {
        #expect(throws: ConfigError(file: "test.conf", line: 2,
                                    "Installations= expects absolute folders such as /var/lib/flatpak-extra, found \"\(value)\"")) {
            try parse("[Flatpak]\nInstallations=\(value)\n")
        }
    }

    @Test func theMoveServiceIsOnByDefaultAndCanBeMovedOrTurnedOff() throws {
        let defaults = try parse("[Family]\nChildren=alice\n")
        #expect(defaults.flatpakMoveService == "/run/familycontrols-flatpak/move.socket")
        #expect(defaults.flatpakGuardInstallation == "/var/lib/familycontrols-flatpak")
        let moved = try parse("[Flatpak]\nMoveService=/run/other/move.socket\nGuardInstallation=/srv/guard-flatpak\n")
        #expect(moved.flatpakMoveService == "/run/other/move.socket")
        #expect(moved.flatpakGuardInstallation == "/srv/guard-flatpak")
        #expect(try parse("[Flatpak]\nMoveService=no\n").flatpakMoveService == nil)
    }

    @Test(arguments: ["relative.socket", "/", "/run/../etc/x", "/run//x", "/run/x/", "/run/a b", "yes"])
    func aMoveServiceThatIsNotOneNormalizedAbsolutePathIsRefused(_ value: String) {
        #expect(throws: ConfigError(file: "test.conf", line: 2, "MoveService= expects an absolute path such as "
                                    + "/run/familycontrols-flatpak/move.socket, found \"\(value)\"")) {
            try parse("[Flatpak]\nMoveService=\(value)\n")
        }
    }

    @Test func trustedRemotesAreReadOneALineWithTheirKeysAndNoneTrustsNothing() throws {
        let configuration = try parse("""
            [Flatpak]
            TrustedRemote=flathub https://dl.flathub.org/repo/ 4c8e f5a3 1234 5678 9abc  def0 1234 5678 9abc def0
            TrustedRemote=local file:///srv/flatpak/repo

            """)
        #expect(configuration.flatpakTrustedRemotes == [
            FlatpakTrustedRemote(name: "flathub", url: "https://dl.flathub.org/repo/",
                                 fingerprints: ["4C8EF5A3123456789ABCDEF0123456789ABCDEF0"]),
            FlatpakTrustedRemote(name: "local", url: "file:///srv/flatpak/repo", fingerprints: []),
        ])
        #expect(try parse("[Flatpak]\nTrustedRemote=none\n").flatpakTrustedRemotes == [])
        #expect(try parse("[Flatpak]\n").flatpakTrustedRemotes == nil)
    }

    @Test(arguments: [("x", "expects NAME URL"), ("-x https://a/ \(String(repeating: "A", count: 40))", "the remote's name"),
                      ("x ftp://a/", "the URL must be"), ("x https://a/", "needs the fingerprints"),
                      ("x https://a/ 1234", "40 hex digits"), ("x https://a/ zz", "is not a key fingerprint")])
    func aTrustedRemoteThatDoesNotHoldIsRefusedWithItsReason(_ value: String, _ reason: String) {
        do {
            _ = try parse("[Flatpak]\nTrustedRemote=\(value)\n")
            Issue.record("TrustedRemote=\(value) was taken")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
            #expect(error.line == 2)
        }
    }

    @Test func anUnknownKeyOrAYesNoMistakeNamesTheLine() {
        #expect(throws: ConfigError(file: "test.conf", line: 2, "unknown key \"User\" in [Flatpak] (expected "
                                    + "UserInstallations, SystemInstallation, Installations, MoveService, GuardInstallation or TrustedRemote)")) {
            try parse("[Flatpak]\nUser=no\n")
        }
        #expect(throws: ConfigError(file: "test.conf", line: 3, "SystemInstallation= expects yes or no, found \"maybe\"")) {
            try parse("[Flatpak]\n\nSystemInstallation=maybe\n")
        }
        #expect(throws: ConfigError(file: "test.conf", line: 1, "[Flatpak] takes no argument, found \"x\"")) {
            try parse("[Flatpak x]\n")
        }
    }
}

/// `[Updates] TrustedKeys=`: the update keys an administrator trusts.
@Suite struct TrustedUpdateKeyConfigurationTests {
    static let key = "ed25519:" + String(repeating: "A", count: 42) + "E="
    static let other = "ed25519:" + String(repeating: "B", count: 42) + "A="

    @Test func keysForEveryAppAndForOneAppAreRead() throws {
        let configuration = try GuardConfiguration(parsing: """
            [Updates]
            TrustedKeys=\(Self.key) org.example.Demo=\(Self.other)
            TrustedKeys=\(Self.key)
            """, path: "test.conf")
        #expect(configuration.trustedUpdateKeys == [
            try #require(TrustedUpdateKey(Self.key)), try #require(TrustedUpdateKey("org.example.Demo=\(Self.other)")),
        ])
        #expect(configuration.trustedUpdateKeys.map(\.appID) == [nil, "org.example.Demo"])
        let cleared = try GuardConfiguration(parsing: "[Updates]\nTrustedKeys=\(Self.key)\nTrustedKeys=\n", path: "test.conf")
        #expect(cleared.trustedUpdateKeys.isEmpty)
    }

    @Test(arguments: [
        "ed25519:short=",
        "ed25519:" + String(repeating: "A", count: 42) + "B=",  // bits beyond the 32nd byte: not canonical
        "ed25519:" + String(repeating: "A", count: 43),
        "rsa:" + String(repeating: "A", count: 42) + "E=",
        "org..Demo=ed25519:" + String(repeating: "A", count: 42) + "E=",
        "org.example.Demo=",
    ])
    func aMalformedKeyIsAnErrorNamingTheLine(_ token: String) {
        #expect(throws: ConfigError(file: "test.conf", line: 2, "TrustedKeys= expects ed25519:BASE64 (the value of an app's "
            + "X-FamilyControls-UpdateKey=) or APPID=ed25519:BASE64, found \"\(token.clipped)\"")) {
            try GuardConfiguration(parsing: "[Updates]\nTrustedKeys=\(token)\n", path: "test.conf")
        }
    }

    @Test func anUnknownKeyInUpdatesIsAnError() {
        #expect(throws: ConfigError(file: "test.conf", line: 2, "unknown key \"Keys\" in [Updates] (expected TrustedKeys)")) {
            try GuardConfiguration(parsing: "[Updates]\nKeys=x\n", path: "test.conf")
        }
    }
}

import Foundation
import FamilyConfiguration
import SystemKit
import Testing
import TestSupport

/// `[Family NAME]` sections and `familycontrols.conf.d` drop-ins, as read.
@Suite struct FamiliesAndDropInsTests {
    private func failure(_ files: [(path: String, text: String)]) -> ConfigError? {
        do throws(ConfigError) {
            _ = try GuardConfiguration(parsing: files)
            return nil
        } catch {
            return error
        }
    }

    @Test func eachNamedFamilyKeepsItsOwnGuardiansAndChildren() throws {
        let configuration = try GuardConfiguration(parsing: """
            [Family]
            Guardians=mum
            Children=alice
            [Family 5B]
            Guardians=@teachers-5b
            Children=@pupils-5b
            [Family chess-club]
            Guardians=coach
            Children=bob
            [Family 5B]
            Children=carol
            """, path: "t.conf")
        #expect(configuration.guardians == [.user("mum")] && configuration.children == [.user("alice")])
        #expect(configuration.families == [
            NamedFamily(name: "5B", guardians: [.group("teachers-5b")], children: [.group("pupils-5b"), .user("carol")]),
            NamedFamily(name: "chess-club", guardians: [.user("coach")], children: [.user("bob")]),
        ])
        #expect(configuration.allFamilies.map(\.sectionArgument) == [nil, "5B", "chess-club"])
    }

    @Test(arguments: ["5B/6", "a b", String(repeating: "x", count: 65), "é"])
    func aFamilyNameThatIsNotOneWordOfLettersDigitsAndDotsIsRefusedWithItsLine(_ name: String) {
        let error = failure([("t.conf", "[Family]\nGuardians=mum\n[Family \(name)]\nChildren=bob\n")])
        #expect(error?.line == 3, "\(String(describing: error))")
        #expect(error?.file == "t.conf")
    }

    @Test func anUnknownKeyInANamedFamilyNamesTheFamily() {
        let error = failure([("t.conf", "[Family 5B]\nGuardian=mum\n")])
        #expect(error?.line == 2)
        #expect(error?.description.contains("in [Family 5B]") == true, "\(String(describing: error))")
    }

    @Test func approvedAppsAreReadPerFamilyWithTheFileThatNamesThem() throws {
        let configuration = try GuardConfiguration(parsing: [
            ("main.conf", "[Family]\nApprovedApps=org.example.Filter,org.example.Clock\n"),
            ("main.conf.d/50-5b.conf", "[Family 5B]\nChildren=@pupils\nApprovedApps=org.example.Filter, org.example.Maths\n"
                + "[Family]\nApprovedApps=org.example.Filter\n"),
        ])
        #expect(configuration.approvedApps == [ConfiguredApproval(appID: "org.example.Filter", file: "main.conf"),
                                               ConfiguredApproval(appID: "org.example.Clock", file: "main.conf")])
        #expect(configuration.families.first?.approvedApps.map(\.appID) == ["org.example.Filter", "org.example.Maths"])
        #expect(configuration.families.first?.approvedApps.allSatisfy { $0.file == "main.conf.d/50-5b.conf" } == true)
        #expect(ConfiguredApproval(appID: "a.b", file: "/etc/x.conf").approver == "configuration (/etc/x.conf)")
        #expect(ConfiguredApproval.isConfiguration("configuration (/etc/x.conf)") && !ConfiguredApproval.isConfiguration("mum"))
        let error = failure([("t.conf", "[Family]\nApprovedApps=org.example.Filter, ../../etc\n")])
        #expect(error?.line == 2 && error?.description.contains("ApprovedApps= expects app IDs") == true, "\(String(describing: error))")
    }

    @Test func dropInsApplyAfterTheMainFileInTheirOrderAndAddToItsLists() throws {
        let configuration = try GuardConfiguration(parsing: [
            ("main.conf", "[Family]\nGuardians=mum\n[Authentication]\nMaxAttempts=3\n"),
            ("main.conf.d/10-lab.conf", "[Family]\nGuardians=dad\n[Family 5B]\nGuardians=@teachers\nChildren=@pupils\n"),
            ("main.conf.d/20-site.conf", "[Authentication]\nMaxAttempts=5\n[Family 5B]\nChildren=carol\n"),
        ])
        #expect(configuration.guardians == [.user("mum"), .user("dad")])
        #expect(configuration.maxAttempts == 5)
        #expect(configuration.families == [NamedFamily(name: "5B", guardians: [.group("teachers")],
                                                       children: [.group("pupils"), .user("carol")])])
    }

    @Test func aMistakeInADropInNamesTheDropInAndItsLine() {
        let error = failure([("main.conf", "[Family]\nGuardians=mum\n"),
                             ("main.conf.d/50-class.conf", "# pushed\n[Family 5B]\nChildren=@pupils\nTeachers=@staff\n")])
        #expect(error?.file == "main.conf.d/50-class.conf" && error?.line == 4, "\(String(describing: error))")
    }

    @Test func theDropInFolderIsTheMainFilesNamePlusDotDAndOnlyItsConfFilesAreReadInByteOrder() throws {
        try withTemporaryDirectorySync { directory in
            let main = "\(directory)/site.conf"
            try "[Family]\nGuardians=mum\n".write(toFile: main, atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: "\(main).d", withIntermediateDirectories: false)
            let files = ["20-b.conf": "[Family]\nGuardians=second\n", "10-a.conf": "[Family]\nGuardians=first\n",
                         "B-upper.conf": "[Family]\nGuardians=upper\n", "a-lower.conf": "[Family]\nGuardians=lower\n",
                         ".hidden.conf": "[Family]\nGuardians=hidden\n", "30-c.conf.dpkg-old": "nonsense",
                         "README": "nonsense", ".conf": "nonsense"]
            for (name, text) in files { try text.write(toFile: "\(main).d/\(name)", atomically: true, encoding: .utf8) }
            #expect(try GuardConfiguration.dropIns(of: main) == ["10-a", "20-b", "B-upper", "a-lower"].map { "\(main).d/\($0).conf" })
            let configuration = try GuardConfiguration.load(path: main)
            #expect(configuration.guardians == ["mum", "first", "second", "upper", "lower"].map(Principal.user))
        }
    }

    @Test func withoutAMainFileAtTheDefaultPathDropInsStillApplyAndElsewhereItIsAnError() throws {
        try withTemporaryDirectorySync { directory in
            let main = "\(directory)/absent.conf"
            try FileManager.default.createDirectory(atPath: "\(main).d", withIntermediateDirectories: false)
            try "[Family]\nGuardians=mum\n".write(toFile: "\(main).d/a.conf", atomically: true, encoding: .utf8)
            #expect(throws: ConfigError.self) { try GuardConfiguration.load(path: main) }
            let files = try GuardConfiguration.readFiles(path: GuardConfiguration.defaultPath)
            #expect(files.allSatisfy { $0.path.hasPrefix(GuardConfiguration.defaultPath) })
        }
    }
}

/// Who guards whom with several families, through real NSS users and groups.
@Suite(.serialized, .enabled(if: canManageUsers, "needs root to create throwaway users and groups"))
struct NamedFamilyMembershipTests {
    @Test func aGuardianDecidesOnlyForTheChildrenOfTheirOwnFamiliesAndAChildInTwoHasBoth() async throws {
        try await withThrowawayUser(prefix: "p", password: false) { pupilA in
            try await withThrowawayUser(prefix: "p", password: false) { pupilB in
                try await withThrowawayUser(prefix: "t", password: false) { teacherA in
                    try await withThrowawayUser(prefix: "t", password: false) { teacherB in
                        try await withThrowawayUser(prefix: "m", password: false) { parent in
                            try await withThrowawayGroup(members: [pupilA.name]) { classA in
                                let configuration = try GuardConfiguration(parsing: """
                                    [Family]
                                    Guardians=\(parent.name)
                                    Children=\(pupilB.name)
                                    [Family 5A]
                                    Guardians=\(teacherA.name)
                                    Children=@\(classA)
                                    [Family 5B]
                                    Guardians=\(teacherB.name)
                                    Children=\(pupilB.name)
                                    """, path: "t.conf")
                                let family = Family(configuration: configuration)
                                func account(_ user: ThrowawayUser) throws -> UserAccount {
                                    try #require(try UserDatabase.user(named: user.name))
                                }
                                #expect(try family.isChild(account(pupilA)) && family.isChild(account(pupilB)))
                                #expect(try !family.isChild(account(teacherA)))
                                #expect(try family.isGuardian(account(teacherA), of: pupilA.name))
                                #expect(try !family.isGuardian(account(teacherA), of: pupilB.name))
                                #expect(try !family.isGuardian(account(teacherB), of: pupilA.name))
                                // The plain family's guardian guards its own child, never a class's.
                                #expect(try !family.isGuardian(account(parent), of: pupilA.name))
                                // A child in two families has the guardians of both.
                                #expect(try family.isGuardian(account(parent), of: pupilB.name))
                                #expect(try family.isGuardian(account(teacherB), of: pupilB.name))
                                #expect(try family.families(of: account(pupilB)) == [nil, "5B"])
                                #expect(try family.guardsSomeone(account(teacherA)) && !family.guardsSomeone(account(pupilA)))
                            }
                        }
                    }
                }
            }
        }
    }
}

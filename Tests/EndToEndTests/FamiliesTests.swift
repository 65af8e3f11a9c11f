import Foundation
import Testing
import TestSupport

/// Several families in one configuration (`[Family NAME]`), against the real
/// Guard with real users and the shipped pam.d: a class's teacher decides
/// for the class's pupils only, a family's guardian for their own child only.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct FamiliesTests {
    /// A Guard whose plain family is the fixture's guardian and child, and a
    /// `[Family 5B]` of a teacher and a pupil (with the demo app), all real users.
    private func withTwoFamilies(_ body: (GuardFixture, _ teacher: ThrowawayUser, _ pupil: ThrowawayUser) async throws -> Void)
        async throws {
        try await withThrowawayUser(prefix: "t") { teacher in
            try await withThrowawayUser(prefix: "q") { pupil in
                try await withGuard(extraConfiguration: "[Family 5B]\nGuardians=\(teacher.name)\nChildren=\(pupil.name)\n") { guardd in
                    try guardd.installDemo(for: pupil)
                    try await body(guardd, teacher, pupil)
                }
            }
        }
    }

    @Test func aTeacherCannotApproveSetOrRevokeForAChildOfAnotherFamily() async throws {
        try await withTwoFamilies { guardd, teacher, pupil in
            let child = guardd.child.name
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            // The other family's request is not the teacher's to see or decide.
            let listed = try await guardd.familyctlAsGuardian(["requests", "--json"], as: teacher)
            #expect(listed.status == 0, "\(listed.standardError)")
            #expect(!listed.standardOutput.contains(child), "\(listed.standardOutput)")
            let approve = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], as: teacher,
                                                               input: "\(teacher.password ?? "")\n")
            #expect(approve.status != 0, "\(approve.standardOutput)")
            let set = try await guardd.familyctlAsGuardian(["set", "--user", child, "--app", GuardFixture.appID, "approved", "--stdin"],
                                                           as: teacher, input: "\(teacher.password ?? "")\n")
            #expect(set.status != 0, "\(set.standardOutput)")
            #expect(set.standardError.contains("guardian of \(child)"), "\(set.standardError)")
            // The child's own guardian still decides.
            let right = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                             input: "\(guardd.guardian.password ?? "")\n")
            #expect(right.status == 0, "\(right.standardError)")
            app.endInput()
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            let revoke = try await guardd.familyctlAsGuardian(["revoke", "--user", child, "--app", GuardFixture.appID, "--stdin"],
                                                              as: teacher, input: "\(teacher.password ?? "")\n")
            #expect(revoke.status != 0, "\(revoke.standardOutput)")
            #expect(try await guardd.storedStatus() == "approved")
            // And the other way round: the teacher decides for the class's pupil, the family's guardian never.
            let byParent = try await guardd.familyctlAsGuardian(["set", "--user", pupil.name, "--app", GuardFixture.appID,
                                                                 "approved", "--stdin"],
                                                                input: "\(guardd.guardian.password ?? "")\n")
            #expect(byParent.status != 0, "\(byParent.standardOutput)")
            let byTeacher = try await guardd.familyctlAsGuardian(["set", "--user", pupil.name, "--app", GuardFixture.appID,
                                                                  "approved", "--stdin"],
                                                                 as: teacher, input: "\(teacher.password ?? "")\n")
            #expect(byTeacher.status == 0, "\(byTeacher.standardError)")
            #expect(try await guardd.storedStatus(user: pupil.name) == "approved")
        }
    }

    @Test func aChildInTwoFamiliesHasTheGuardiansOfBoth() async throws {
        try await withThrowawayUser(prefix: "t") { teacher in
            try await withGuard(extraConfiguration: "[Family 5B]\nGuardians=\(teacher.name)\nChildren=@\(teacher.name)-none\n")
            { guardd in
                // The fixture's child joins 5B too, by a drop-in such as a tool pushes; a reload takes it.
                let folder = "\(guardd.configPath).d"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
                try "[Family 5B]\nChildren=\(guardd.child.name)\n".write(toFile: "\(folder)/50-5b.conf", atomically: true, encoding: .utf8)
                chmod("\(folder)/50-5b.conf", 0o644)
                try await guardd.reload()
                let set = try await guardd.familyctlAsGuardian(["set", "--user", guardd.child.name, "--app", GuardFixture.appID,
                                                                "approved", "--stdin"],
                                                               as: teacher, input: "\(teacher.password ?? "")\n")
                #expect(set.status == 0, "\(set.standardError)")
                let revoke = try await guardd.familyctlAsGuardian(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID,
                                                                   "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                #expect(revoke.status == 0, "\(revoke.standardError)")
            }
        }
    }

    /// Signs the child's demo as its developer would, with a key the
    /// administrator then trusts for it, and returns that key.
    private func signDemo(_ guardd: GuardFixture) async throws -> String {
        let (file, key) = try await guardd.makeUpdateKey("vendor")
        try await sh("'\(productPath("familycontrols-sign"))' sign-update '\(file)' '\(guardd.appDirectory)' && "
            + "chown -R \(guardd.child.name): '\(guardd.appDirectory)'").requireSuccess()
        return key
    }

    @Test func anAppTheConfigurationApprovesIsApprovedAndLockedAtItsRequestAndRevokedWhenTheLineGoes() async throws {
        try await withGuard { guardd in
            let key = try await signDemo(guardd)
            let folder = "\(guardd.configPath).d", dropIn = "\(guardd.configPath).d/50-apps.conf"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try "[Family]\nApprovedApps=org.example.Other, \(GuardFixture.appID)\n[Updates]\nTrustedKeys=\(GuardFixture.appID)=\(key)\n"
                .write(toFile: dropIn, atomically: true, encoding: .utf8)
            chmod(dropIn, 0o644)
            try await guardd.reload()

            // No alert, no guardian: approved at once, and locked against the child.
            let (approved, result) = try await guardd.isApproved(executable: guardd.appExecutable)
            #expect(approved, "\(result.standardOutput)\(result.standardError)")
            #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").status != 0)
            #expect(FileManager.default.fileExists(atPath: "\(guardd.appDirectory)/familycontrols-demo"))
            var rows = try await guardd.auditRows()
            #expect(rows.contains("configuration (\(dropIn)) approve \(guardd.child.name) \(GuardFixture.appID) approved"), "\(rows)")
            let status = try await guardd.familyctl(["status", "--user", guardd.child.name])
            #expect(status.standardOutput.contains(dropIn), "\(status.standardOutput)")
            // The adult, in no family, is not approved by it: theirs is an individual's question.
            let adult = try await guardd.app(["request", "--member", "child", "--stdin"], as: guardd.adult, input: "")
            #expect(adult.status != 0, "\(adult.standardOutput)")

            // The line goes: the next reload revokes and unlocks.
            try FileManager.default.removeItem(atPath: dropIn)
            try await guardd.reload()
            #expect(try await guardd.storedStatus() == "notDetermined")
            rows = try await guardd.auditRows()
            #expect(rows.contains("configuration revoke \(guardd.child.name) \(GuardFixture.appID) revoked"), "\(rows)")
            #expect(try TreeSnapshot.take(guardd.appDirectory).items.allSatisfy { !$0.isImmutable })

            // A guardian's own decision works beside the configuration's, and a reload leaves it be.
            let byGuardian = try await guardd.requestApproved()
            #expect(byGuardian.status == 0, "\(byGuardian.standardError)")
            try await guardd.reload()
            #expect(try await guardd.storedStatus() == "approved")
            rows = try await guardd.auditRows()
            #expect(rows.contains { $0.hasPrefix("\(guardd.guardian.name) approve \(guardd.child.name) \(GuardFixture.appID) approved") },
                    "\(rows)")
            #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").status != 0)
        }
    }

    @Test func anAppApprovedForAnotherFamilyStillNeedsAGuardian() async throws {
        try await withThrowawayUser(prefix: "q") { pupil in
            try await withGuard(extraConfiguration: "[Family 5B]\nChildren=\(pupil.name)\nApprovedApps=\(GuardFixture.appID)\n") { guardd in
                let app = try guardd.startApp(executable: guardd.appExecutable)
                defer { app.stop() }
                // The plain family's child waits for their own guardian.
                _ = try await app.waitForPendingRequest()
                #expect(try await guardd.storedStatus() != "approved")
            }
        }
    }

    /// An `ApprovedApps=` line names an app ID; the child can name a folder
    /// of their own anything. Unsigned by a key the administrator trusts,
    /// it is a guardian's question, as any app is.
    @Test func aFolderOfTheChildsNamedLikeAnApprovedAppIsAGuardiansQuestion() async throws {
        try await withGuard(extraConfiguration: "[Family]\nApprovedApps=\(GuardFixture.appID)\n") { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            _ = try await app.waitForPendingRequest()
            #expect(try await guardd.storedStatus() != "approved")
            #expect(guardd.log.contains("is in ApprovedApps= of"), "\(guardd.log)")
        }
    }
}

import Foundation
import Testing
import TestSupport

/// A school's users in a directory: a real slapd and SSSD (``DirectoryServer``),
/// a teacher and pupils who exist only in LDAP, the real Guard with the
/// shipped pam.d services (their documented directory stack), and real
/// processes as the pupils and the teacher. SSSD and nsswitch.conf are the
/// machine's: one test at a time.
@Suite(.serialized, .enabled(if: canRunGuard && DirectoryServer.unavailableReason == nil,
                             "needs root, the built products, slapd, ldap-utils, sssd-ldap, libnss-sss and libpam-sss (Config/install.sh --packages-only), and no sssd of the machine's running"))
struct DirectoryTests {
    /// A class in the directory: its teacher, its pupils, and their two groups.
    struct SchoolClass {
        var teacher: ThrowawayUser
        var pupils: [ThrowawayUser]
        var teachers: String
        var pupilsGroup: String
    }

    /// What the class's Guard authenticates guardians with.
    enum AuthStack: String, CustomTestStringConvertible, Sendable {
        /// The stack the shipped guardian service documents for directory
        /// users, which keeps pam_sss's PAM_AUTHINFO_UNAVAIL.
        case documented
        /// The shipped services unchanged (`@include common-auth`), with the
        /// common-auth the real pam-auth-update writes with SSSD enabled:
        /// pam_sss's PAM_AUTHINFO_UNAVAIL goes on to pam_deny's PAM_AUTH_ERR.
        case shippedWithDebianCommonAuth
        var testDescription: String { rawValue }
    }

    /// A directory with a class of `pupils` pupils, and a Guard whose plain
    /// `[Family]` is the fixture's local guardian and child and whose
    /// `[Family 5B]` is the class's groups (`extra` added to its
    /// `[Authentication]` section's end), each pupil with the demo app.
    private func withClass(pupils count: Int = 1, extra: String = "", stack: AuthStack = .documented,
                           _ body: (GuardFixture, DirectoryServer, SchoolClass) async throws -> Void) async throws {
        try await withDirectory { directory in
            let school = try await offload {
                let teacher = try directory.addUser(prefix: "t")
                let pupils = try (0..<count).map { _ in try directory.addUser(prefix: "q") }
                return SchoolClass(teacher: teacher, pupils: pupils,
                                   teachers: try directory.addGroup(prefix: "teachers", members: [teacher]),
                                   pupilsGroup: try directory.addGroup(prefix: "pupils", members: pupils))
            }
            let configuration = "\(extra)\n[Family 5B]\nGuardians=@\(school.teachers)\nChildren=@\(school.pupilsGroup)\n"
            try await withGuard(extraConfiguration: configuration) { guardd in
                switch stack {
                case .documented: try directory.useDirectoryStack(in: guardd.pamDirectory)
                case .shippedWithDebianCommonAuth: try await useDebianCommonAuthWithSSSD(guardd)
                }
                for pupil in school.pupils { try guardd.installDemo(for: pupil) }
                try await body(guardd, directory, school)
            }
        }
    }

    /// Starts the demo as `pupil`, asking for a child authorization, its input left open.
    private func startApp(_ guardd: GuardFixture, as pupil: ThrowawayUser) throws -> RunningApp {
        try RunningApp(arguments: guardd.commandLine(as: pupil, executable: guardd.appExecutable(for: pupil),
                                                     ["request", "--member", "child", "--stdin"]))
    }

    /// Whether the pupil's own process can change their app's folder (no lock holds it).
    private func canChange(_ guardd: GuardFixture, appOf pupil: ThrowawayUser) async throws -> Bool {
        let folder = "\(guardd.appsRoot)/\(pupil.name)/\(GuardFixture.appID)"
        return try await guardd.shell("touch '\(folder)/probe' && rm -f '\(folder)/probe'", as: pupil).status == 0
    }

    /// The audit rows of `user` with their details: "actor action user app outcome | detail".
    private func auditDetails(_ guardd: GuardFixture, user: String) async throws -> [String] {
        let result = try await run("/usr/bin/sqlite3", ["-separator", " ", "\(guardd.stateDirectory)/familycontrols.db",
            "SELECT actor, action, user, coalesce(app_id,'-'), outcome, '|', coalesce(detail,'') FROM audit "
            + "WHERE user = '\(user)' OR actor = '\(user)' ORDER BY id"])
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    // MARK: - 1. Classes

    @Test func aTeacherInTheDirectoryDecidesForTheClassesPupilsOnlyWithTheirDirectoryPassword() async throws {
        try await withClass(pupils: 2) { guardd, _, school in
            let teacher = school.teacher, child = guardd.child.name
            let password = "\(teacher.password ?? "")\n"
            // The plain family's child: the teacher neither sees, approves, sets nor revokes.
            let childApp = try guardd.startApp(executable: guardd.appExecutable)
            defer { childApp.stop() }
            let childRequest = try await childApp.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests", "--json"], as: teacher)
            #expect(listed.status == 0, "\(listed.standardError)")
            #expect(!listed.standardOutput.contains(child), "\(listed.standardOutput)")
            let approve = try await guardd.familyctlAsGuardian(["approve", String(childRequest), "--stdin"], as: teacher, input: password)
            #expect(approve.status != 0, "\(approve.standardOutput)")
            let set = try await guardd.familyctlAsGuardian(["set", "--user", child, "--app", GuardFixture.appID, "approved", "--stdin"],
                                                           as: teacher, input: password)
            #expect(set.status != 0, "\(set.standardOutput)")
            #expect(set.standardError.contains("guardian of \(child)"), "\(set.standardError)")
            let byParent = try await guardd.familyctlAsGuardian(["approve", String(childRequest), "--stdin"],
                                                                input: "\(guardd.guardian.password ?? "")\n")
            #expect(byParent.status == 0, "\(byParent.standardError)")
            childApp.endInput()
            #expect(await childApp.exitStatus() == 0, "\(childApp.standardError)")
            let revoke = try await guardd.familyctlAsGuardian(["revoke", "--user", child, "--app", GuardFixture.appID, "--stdin"],
                                                              as: teacher, input: password)
            #expect(revoke.status != 0, "\(revoke.standardOutput)")
            #expect(try await guardd.storedStatus() == "approved")

            // A pupil's request: the teacher's directory password, through pam_sss, approves it, and the lock holds.
            let first = school.pupils[0], second = school.pupils[1]
            let app = try startApp(guardd, as: first)
            defer { app.stop() }
            let request = try await app.waitForPendingRequest()
            let approved = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher, input: password)
            #expect(approved.status == 0, "\(approved.standardError)\n\(guardd.log)")
            app.endInput()
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(try await guardd.storedStatus(user: first.name) == "approved")
            #expect(try await !canChange(guardd, appOf: first))
            // The local guardian is nobody's guardian in 5B; the teacher sets for the other pupil.
            let parentSets = try await guardd.familyctlAsGuardian(["set", "--user", second.name, "--app", GuardFixture.appID,
                                                                   "approved", "--stdin"],
                                                                  input: "\(guardd.guardian.password ?? "")\n")
            #expect(parentSets.status != 0, "\(parentSets.standardOutput)")
            let teacherSets = try await guardd.familyctlAsGuardian(["set", "--user", second.name, "--app", GuardFixture.appID,
                                                                    "approved", "--stdin"], as: teacher, input: password)
            #expect(teacherSets.status == 0, "\(teacherSets.standardError)")
            #expect(try await guardd.storedStatus(user: second.name) == "approved")

            // status and log name the directory's people.
            let status = try await guardd.familyctlAsGuardian(["status"], as: teacher)
            #expect(status.status == 0, "\(status.standardError)")
            #expect(status.standardOutput.contains(first.name) && status.standardOutput.contains(second.name),
                    "\(status.standardOutput)")
            #expect(!status.standardOutput.contains(child), "\(status.standardOutput)")
            let log = try await guardd.familyctl(["log", "--user", first.name])
            #expect(log.status == 0, "\(log.standardError)")
            #expect(log.standardOutput.split(separator: "\n").contains { $0.contains(teacher.name) && $0.contains("approve") },
                    "\(log.standardOutput)")

            // And the teacher revokes the pupil's: unlocked.
            let revoked = try await guardd.familyctlAsGuardian(["revoke", "--user", first.name, "--app", GuardFixture.appID, "--stdin"],
                                                               as: teacher, input: password)
            #expect(revoked.status == 0, "\(revoked.standardError)")
            #expect(try await guardd.storedStatus(user: first.name) == "notDetermined")
            #expect(try await canChange(guardd, appOf: first))
        }
    }

    // MARK: - 7. People who leave

    /// Waits up to 20 s for `user`'s demo to have `status`.
    private func waitForStatus(_ guardd: GuardFixture, of user: ThrowawayUser, _ status: String) async throws -> Bool {
        try await eventually(timeout: .seconds(20), asking: { try await guardd.storedStatus(user: user.name) == status })
    }

    @Test func aPupilRemovedFromTheDirectoryGroupLosesTheApprovalAtThePeriodicCheckButNotWhileTheDirectoryCannotAnswer()
        async throws {
        try await withClass(pupils: 2, extra: "\n[Locks]\nVerifyInterval=1s\n") { guardd, directory, school in
            let (leaver, stayer) = (school.pupils[0], school.pupils[1])
            for pupil in school.pupils {
                let set = try await guardd.familyctlAsGuardian(["set", "--user", pupil.name, "--app", GuardFixture.appID,
                                                                "approved", "--stdin"],
                                                               as: school.teacher, input: "\(school.teacher.password ?? "")\n")
                #expect(set.status == 0, "\(set.standardError)")
                #expect(try await !canChange(guardd, appOf: pupil))
            }

            // Removed from the class in the directory: gone at the next periodic check, no reload.
            try await offload {
                try directory.remove(leaver, from: school.pupilsGroup)
                try directory.expireCache()
            }
            #expect(try await waitForStatus(guardd, of: leaver, "notDetermined"), "\(guardd.log)")
            // The store is written first, then the lock released: the folder follows soon after.
            #expect(try await eventually(asking: { try await canChange(guardd, appOf: leaver) }), "\(guardd.log)")
            let rows = try await auditDetails(guardd, user: leaver.name)
            #expect(rows.contains { $0.hasPrefix("configuration revoke \(leaver.name) \(GuardFixture.appID) revoked")
                && $0.hasSuffix("no longer a child of any family") }, "\(rows)")
            #expect(try await guardd.storedStatus(user: stayer.name) == "approved")

            // The directory down and nothing cached: the other pupil leaves the class in slapd's
            // database meanwhile, but no check can learn it, and nothing is revoked.
            let before = guardd.log.components(separatedBy: "cannot be found now").count
            try await offload {
                try directory.stopServer()
                try directory.restartSSSDWithAnEmptyCache()
                try directory.removeWhileStopped(stayer, from: school.pupilsGroup)
            }
            try await waitUntil(timeout: 15) { guardd.log.components(separatedBy: "cannot be found now").count > before + 2 }
            // (A user nobody can look up who has nothing recorded is "no such user": nil here.)
            #expect((try? await guardd.storedStatus(user: stayer.name)) == "approved", "\(guardd.log)")
            #expect(try await !canChange(guardd, appOf: stayer))
            #expect(try await auditDetails(guardd, user: stayer.name).allSatisfy { !$0.contains(" revoke ") })

            // Once the directory answers again, the check follows it.
            try await offload {
                try directory.restartServer()
                try directory.expireCache()
            }
            #expect(try await waitForStatus(guardd, of: stayer, "notDetermined"), "\(guardd.log)")
            // The store is written first, then the lock released: the folder follows soon after.
            #expect(try await eventually(asking: { try await canChange(guardd, appOf: stayer) }), "\(guardd.log)")
        }
    }

    // MARK: - 8. The directory is down

    /// Restarts the Guard in a mount namespace of its own whose /etc/pam.d is
    /// the machine's as the real `pam-auth-update --enable sss` writes it (the
    /// machine's own is never written): the shipped services include that
    /// common-auth, where pam_sss is followed by pam_deny.
    private func useDebianCommonAuthWithSSSD(_ guardd: GuardFixture) async throws {
        let copy = "\(guardd.directory)/machine-pam"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        try await PrivateLoginStack.pamAuthUpdate(["--enable", "sss"], in: copy)
        let commonAuth = try String(contentsOfFile: "\(copy)/pam.d/common-auth", encoding: .utf8)
        let modules = commonAuth.split(separator: "\n").filter { $0.hasPrefix("auth") }
        #expect(modules.firstIndex { $0.contains("pam_sss.so") } ?? .max < modules.firstIndex { $0.contains("pam_deny.so") } ?? -1,
                "\(commonAuth)")
        let shipped = try String(contentsOfFile: "\(guardd.pamDirectory)/familycontrols-guardian", encoding: .utf8)
        #expect(shipped.contains("\n@include common-auth\n"), "\(shipped)")
        guardd.stop()
        guardd.launchPrefix = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                               "mount --bind \"$0\" /etc/pam.d && exec \"$@\"", "\(copy)/pam.d"]
        try await guardd.start()
    }

    /// Told apart with the stack the shipped service documents for directory
    /// users, and with the shipped service as it is on a Debian machine whose
    /// common-auth has SSSD (pam_deny turns the answer into a wrong password;
    /// the Guard reads pam_sss's own answer from what it logs).
    @Test(arguments: [AuthStack.documented, .shippedWithDebianCommonAuth])
    func aDirectoryDownMidRequestIsToldAsSuchAuditedAndNotCountedAsAFailedPassword(stack: AuthStack) async throws {
        // One counted failure would make the next attempt wait (FailureDelay=, 30 s by default).
        try await withClass(extra: "MaxAttempts=1\n", stack: stack) { guardd, directory, school in
            let teacher = school.teacher, pupil = school.pupils[0]
            let app = try startApp(guardd, as: pupil)
            defer { app.stop() }
            let request = try await app.waitForPendingRequest()

            // The teacher's prompt waits; the directory goes down; the right password is typed.
            let approve = try RunningApp(arguments: ["/usr/bin/setpriv", "--reuid=\(teacher.uid)", "--regid=\(teacher.gid)",
                                                     "--clear-groups", productPath("familyctl"), "approve", String(request),
                                                     "--stdin", "--socket", guardd.socket])
            defer { approve.stop() }
            #expect(await approve.waitForError(containing: "assword"), "\(approve.standardError)")
            try await offload { try directory.stopServer() }
            approve.write("\(teacher.password ?? "")\n")
            let status = await approve.exitStatus()
            #expect(status != 0, "\(approve.standardOutput)")
            #expect(approve.standardError.contains("directory cannot be reached"), "\(approve.standardError)")
            #expect(!approve.standardError.contains("Sorry"), "\(approve.standardError)")
            var rows = try await auditDetails(guardd, user: teacher.name)
            #expect(rows.contains { $0.hasPrefix("\(teacher.name) request \(pupil.name) \(GuardFixture.appID) directory unavailable") },
                    "\(rows)")
            #expect(!rows.contains { $0.contains("authentication failed") }, "\(rows)")

            // Right after: not told to wait, told again that the directory cannot be reached.
            let again = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher,
                                                             input: "\(teacher.password ?? "")\n")
            #expect(again.status != 0, "\(again.standardOutput)")
            #expect(!again.standardError.contains("Too many failed attempts"), "\(again.standardError)")
            #expect(again.standardError.contains("directory cannot be reached"), "\(again.standardError)")

            // The directory back: the same password approves.
            try await offload { try directory.restartServer() }
            var approved = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher,
                                                                input: "\(teacher.password ?? "")\n")
            // SSSD may take a moment to go online again.
            for _ in 0..<20 where approved.status != 0 && approved.standardError.contains("directory cannot be reached") {
                try await Task.sleep(for: .milliseconds(500))
                approved = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher,
                                                                input: "\(teacher.password ?? "")\n")
            }
            #expect(approved.status == 0, "\(approved.standardError)")
            app.endInput()
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(try await guardd.storedStatus(user: pupil.name) == "approved")
            rows = try await auditDetails(guardd, user: teacher.name)
            #expect(!rows.contains { $0.contains("authentication failed") || $0.contains("refused") }, "\(rows)")
        }
    }

    /// Behind the same shipped stack with the directory up, a wrong
    /// password is a wrong password: told so, audited, and counted (the next
    /// attempt waits), however the Guard reads pam_sss's answers.
    @Test func aWrongDirectoryPasswordBehindTheShippedStackIsStillCounted() async throws {
        try await withClass(extra: "MaxAttempts=1\n", stack: .shippedWithDebianCommonAuth) { guardd, _, school in
            let teacher = school.teacher, pupil = school.pupils[0]
            let app = try startApp(guardd, as: pupil)
            defer { app.stop() }
            let request = try await app.waitForPendingRequest()
            let wrong = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher,
                                                             input: "not-\(teacher.password ?? "")\n")
            #expect(wrong.status != 0, "\(wrong.standardOutput)")
            #expect(!wrong.standardError.contains("directory cannot be reached"), "\(wrong.standardError)")
            let rows = try await auditDetails(guardd, user: teacher.name)
            #expect(rows.contains { $0.hasPrefix("\(teacher.name) request \(pupil.name) \(GuardFixture.appID) authentication failed") },
                    "\(rows)")
            #expect(!rows.contains { $0.contains("directory unavailable") }, "\(rows)")
            // Counted: the right password right after is told to wait.
            let right = try await guardd.familyctlAsGuardian(["approve", String(request), "--stdin"], as: teacher,
                                                             input: "\(teacher.password ?? "")\n")
            #expect(right.status != 0 && right.standardError.contains("Too many failed attempts"), "\(right.standardError)")
        }
    }

    // MARK: - A directory group that cannot be looked up

    /// A group NSS cannot look up (SSSD's sockets there but nothing
    /// answering: every lookup it would answer fails, ECONNREFUSED) is no
    /// "no" from the rest of the configuration: a local guardian named
    /// after a directory group, in a family after one whose groups fail,
    /// still decides for their local child. The Guard runs in a mount
    /// namespace of its own whose /var/lib/sss/pipes holds sockets nothing
    /// listens on, so no other test's lookups fail while this one runs.
    @Test
    func aLocalGuardianListedAfterADirectoryGroupStillDecidesWhileSSSDCannotBeReached() async throws {
        try await withClass { guardd, directory, school in
            let adult = guardd.adult.name
            try guardd.writeConfiguration(extra: "\n[Family 5B]\nGuardians=@\(school.teachers)\nChildren=@\(school.pupilsGroup)\n"
                + "[Family 6C]\nGuardians=@\(school.teachers) \(guardd.guardian.name)\nChildren=\(adult)\n")
            let pipes = "\(guardd.directory)/dead-sssd"
            try DirectoryServer.makeSocketsNothingListensOn(in: pipes)
            guardd.stop()
            guardd.launchPrefix = ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                                   "mount --bind \"$0\" /var/lib/sss/pipes && exec \"$@\"", pipes]
            try await guardd.start()
            try await guardd.waitUntilReconciled()
            let set = try await guardd.familyctlAsGuardian(["set", "--user", adult, "--app", GuardFixture.appID, "approved", "--stdin"],
                                                           input: "\(guardd.guardian.password ?? "")\n")
            #expect(set.status == 0, "\(set.standardError)\n\(guardd.log)")
            #expect(try await guardd.storedStatus(user: adult) == "approved")
        }
    }
}

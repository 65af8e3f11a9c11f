import Foundation
import Testing
import TestSupport

/// The shipped Ansible role, `Config/ansible/roles/familycontrols`, run by a
/// real `ansible-playbook` against this machine (`-c local`) and against a
/// second one over SSH (a real sshd on 127.0.0.1): the drop-ins it writes
/// from its variables are read by the real Guard, which it reloads; a second
/// run changes nothing; what the Guard would refuse fails the play and leaves
/// the files in place alone. Each "machine" is a Guard of its own with its
/// own configuration, socket and store; the users are real.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"),
       .enabled(if: AnsiblePlaybook.program != nil, "needs ansible-playbook (python3 -m pip install ansible-core)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                "needs /usr/bin/python3, the Python the role's modules run under"))
struct AnsibleRoleTests {
    /// The role's variables for the machine whose Guard is `guardd`: the
    /// Guard just built checks the configuration, with the fixture's PAM
    /// services and store; nothing is installed.
    private func variables(_ guardd: GuardFixture, families: [[String: Any]], settings: [String: Any] = [:]) -> [String: Any] {
        ["familycontrols_install_package": false, "familycontrols_config_path": guardd.configPath,
         "familycontrols_guard_path": productPath("familycontrolsd"),
         "familycontrols_check_options": ["--pam-dir", guardd.pamDirectory, "--state-dir", guardd.stateDirectory],
         "familycontrols_families": families, "familycontrols_settings": settings]
    }

    /// How often the Guard has said it reloaded.
    private func reloads(_ guardd: GuardFixture) -> Int { guardd.log.components(separatedBy: "reloaded \(guardd.configPath)").count - 1 }

    /// Each file of the configuration (main file and drop-ins) with its bytes and modification time.
    private func configurationFiles(_ guardd: GuardFixture) throws -> [String: String] {
        let folder = "\(guardd.configPath).d"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var files: [String: String] = [:]
        for path in [guardd.configPath] + names.map({ "\(folder)/\($0)" }) {
            let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            files[path] = "\(modified?.timeIntervalSince1970 ?? 0) " + (try String(contentsOfFile: path, encoding: .utf8))
        }
        return files
    }

    /// `familyctl set` of the demo for `user`, as `teacher` with their password.
    private func set(_ guardd: GuardFixture, for user: String, as teacher: ThrowawayUser) async throws -> ProcessResult {
        try await guardd.familyctlAsGuardian(["set", "--user", user, "--app", GuardFixture.appID, "approved", "--stdin"],
                                             as: teacher, input: "\(teacher.password ?? "")\n")
    }

    @Test func theRoleConfiguresThisMachineAndOneOverSSHForAClassAndItsSecondRunChangesNothing() async throws {
        try await withThrowawayUser(prefix: "t") { teacher in
            try await withThrowawayUser(prefix: "q") { pupil in
                try await withGuard { here in
                    try await withGuard { there in
                        for guardd in [here, there] { try guardd.installDemo(for: pupil) }
                        let keys = try SSHKeys(teacher: teacher)
                        let server = try SSHServer(keys: keys, logins: [], socket: nil, installed: false, root: true)
                        defer { server.stop() }
                        let playbook = try AnsiblePlaybook()
                        let families: [[String: Any]] = [["name": "5B", "guardians": [teacher.name], "children": [pupil.name]]]
                        let hosts: [AnsiblePlaybook.Host] = [
                            .local("here", variables(here, families: families)),
                            .ssh("there", server: server, keys: keys, variables(there, families: families)),
                        ]

                        let first = try await playbook.run(hosts)
                        #expect(first.succeeded, "\(first)")
                        for (host, guardd) in [("here", here), ("there", there)] {
                            #expect(first.failed(host) == 0 && (first.changed(host) ?? 0) > 0, "\(host): \(first)")
                            let dropIn = "\(guardd.configPath).d/50-ansible-family-5B.conf"
                            let text = try String(contentsOfFile: dropIn, encoding: .utf8)
                            #expect(text.hasSuffix("[Family 5B]\nGuardians=\(teacher.name)\nChildren=\(pupil.name)\n"), "\(text)")
                            var status = stat()
                            #expect(stat(dropIn, &status) == 0 && status.st_uid == 0 && status.st_mode & 0o7777 == 0o644)
                            // Reloaded by the role's handler (SIGHUP: no systemd here), the Guard knows the class.
                            try await waitUntil(timeout: 60) { self.reloads(guardd) == 1 }
                            let forPupil = try await set(guardd, for: pupil.name, as: teacher)
                            #expect(forPupil.status == 0, "\(host): \(forPupil.standardError)")
                            let forOtherChild = try await set(guardd, for: guardd.child.name, as: teacher)
                            #expect(forOtherChild.status != 0, "\(host): \(forOtherChild.standardOutput)")
                            #expect(forOtherChild.standardError.contains("guardian of \(guardd.child.name)"), "\(forOtherChild.standardError)")
                        }
                        // The same Guards, not others of this machine's, were reloaded.
                        #expect(reloads(here) == 1 && reloads(there) == 1)

                        let before = try [here, there].map(configurationFiles)
                        let second = try await playbook.run(hosts)
                        #expect(second.succeeded, "\(second)")
                        #expect(second.changed("here") == 0 && second.changed("there") == 0, "\(second)")
                        #expect(try [here, there].map(configurationFiles) == before)
                        try await Task.sleep(for: .milliseconds(300))
                        #expect(reloads(here) == 1 && reloads(there) == 1, "a run that changed nothing reloaded")
                        #expect(!server.log.isEmpty && server.log.contains("Accepted publickey for root"), "\(server.log)")
                    }
                }
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

    @Test func anAppTheRolesVariablesApproveIsApprovedAndRevokedWhenTheyNoLongerGiveIt() async throws {
        try await withGuard { guardd in
            let key = try await signDemo(guardd)
            let playbook = try AnsiblePlaybook()
            let approving = variables(guardd, families: [["approved_apps": [GuardFixture.appID, "org.example.Other"]]],
                                      settings: ["Updates": ["TrustedKeys": ["\(GuardFixture.appID)=\(key)"]]])
            let first = try await playbook.run([.local("here", approving)])
            #expect(first.succeeded, "\(first)")
            let dropIn = "\(guardd.configPath).d/50-ansible-family.conf"
            let text = try String(contentsOfFile: dropIn, encoding: .utf8)
            #expect(text.hasSuffix("[Family]\nApprovedApps=\(GuardFixture.appID), org.example.Other\n"), "\(text)")
            try await waitUntil(timeout: 60) { self.reloads(guardd) == 1 }

            // Approved at its request, no guardian asked, and locked against the child.
            let (approved, result) = try await guardd.isApproved(executable: guardd.appExecutable)
            #expect(approved, "\(result.standardOutput)\(result.standardError)")
            #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").status != 0)
            var rows = try await guardd.auditRows()
            #expect(rows.contains("configuration (\(dropIn)) approve \(guardd.child.name) \(GuardFixture.appID) approved"), "\(rows)")

            // The variables no longer give it: the role removes its drop-ins, the Guard revokes and unlocks.
            let second = try await playbook.run([.local("here", variables(guardd, families: []))])
            #expect(second.succeeded, "\(second)")
            #expect(!FileManager.default.fileExists(atPath: dropIn))
            #expect(!FileManager.default.fileExists(atPath: "\(guardd.configPath).d/50-ansible-settings.conf"))
            try await waitUntil(timeout: 60) { self.reloads(guardd) == 2 }
            #expect(try await guardd.storedStatus() == "notDetermined")
            rows = try await guardd.auditRows()
            #expect(rows.contains("configuration revoke \(guardd.child.name) \(GuardFixture.appID) revoked"), "\(rows)")
            #expect(try TreeSnapshot.take(guardd.appDirectory).items.allSatisfy { !$0.isImmutable })
        }
    }

    @Test func variablesTheGuardOrTheRoleRefusesFailThePlayAndLeaveTheFilesInPlaceAlone() async throws {
        try await withThrowawayUser(prefix: "t") { teacher in
            try await withThrowawayUser(prefix: "q") { pupil in
                try await withGuard { guardd in
                    try guardd.installDemo(for: pupil)
                    let playbook = try AnsiblePlaybook()
                    let good: [String: Any] = ["name": "5B", "guardians": [teacher.name], "children": [pupil.name]]
                    let first = try await playbook.run([.local("here", variables(guardd, families: [good],
                                                                                 settings: ["Authentication": ["PromptTimeout": "30s"]]))])
                    #expect(first.succeeded, "\(first)")
                    try await waitUntil(timeout: 60) { self.reloads(guardd) == 1 }
                    // Another tool's drop-in, which the role must keep and check beside its own.
                    let theirs = "\(guardd.configPath).d/40-other.conf"
                    try "[Family 5B]\nChildren=\(guardd.adult.name)\n".write(toFile: theirs, atomically: true, encoding: .utf8)
                    chmod(theirs, 0o644)
                    let before = try configurationFiles(guardd)

                    let folder = "\(guardd.configPath).d"
                    let refusals: [(what: String, families: [[String: Any]], settings: [String: Any], says: [String])] = [
                        ("a child who is root", [["name": "5B", "guardians": [teacher.name], "children": [pupil.name, "root"]]], [:],
                         ["refused: root is a child here", "nothing was changed"]),
                        // Refused only for what the other tool's drop-in says: the adult is a pupil of 5B there.
                        ("a guardian who is a child by another drop-in",
                         [good, ["name": "6A", "guardians": [guardd.adult.name], "children": [pupil.name]]], [:],
                         ["refused", guardd.adult.name, "nothing was changed"]),
                        ("a key the Guard does not know", [good], ["Authentication": ["PromptTimeOut": "2min"]],
                         ["\(folder)/50-ansible-settings.conf:4: refused: unknown key \"PromptTimeOut\" in [Authentication]"]),
                        ("a key the role does not know", [["name": "5B", "guardian": [teacher.name]]], [:],
                         ["unknown key guardian (known: name, guardians, children, approved_apps)"]),
                        ("a name that carries a section of its own", [["name": "5B", "guardians": ["\(teacher.name)\n[Child \(pupil.name)]"]]],
                         [:], ["lists of names without spaces, commas or #"]),
                        ("a family name that leaves the folder", [["name": "../../x", "children": [pupil.name]]], [:],
                         ["the name is 1 to 64 letters, digits, . _ or -"]),
                    ]
                    for refusal in refusals {
                        let outcome = try await playbook.run([.local("here", variables(guardd, families: refusal.families,
                                                                                        settings: refusal.settings))])
                        #expect(!outcome.succeeded && outcome.failed("here") == 1, "\(refusal.what): \(outcome)")
                        for words in refusal.says {
                            #expect(outcome.output.contains(words), "\(refusal.what): \(outcome)")
                        }
                        // The findings name the machine's files, never the check's private copy.
                        #expect(!outcome.output.contains("familycontrols-check."), "\(refusal.what): \(outcome)")
                        #expect(try configurationFiles(guardd) == before, "\(refusal.what) changed the files in place")
                    }
                    #expect(reloads(guardd) == 1, "a refused run reloaded the Guard")
                    // The Guard still runs on what was in place: the teacher decides for the class.
                    let forPupil = try await set(guardd, for: pupil.name, as: teacher)
                    #expect(forPupil.status == 0, "\(forPupil.standardError)")
                }
            }
        }
    }
}

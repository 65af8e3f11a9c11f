import Foundation
import Testing
import TestSupport

/// The real Guard, configured with the Flatpak move service's socket
/// (`[Flatpak] MoveService=`), here the real service under
/// `systemd-socket-activate` as `familycontrols-flatpak.socket` runs it: a
/// guardian's approval of a child's per-user Flatpak app moves it into the
/// Guard's root-owned installation instead of locking it in place.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"),
       .enabled(if: FlatpakSystemServices.isAvailable,
                "needs polkitd (/usr/lib/polkit-1/polkitd) and flatpak-system-helper (Debian's polkitd and flatpak; .ci/run installs them)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"),
                "needs systemd-socket-activate (Debian's systemd)"))
struct FlatpakMoveApprovalTests {
    let appID = FlatpakChild.appID

    @Test func anApprovedPerUserAppIsMovedIntoTheGuardsInstallationAndCannotBeUninstalled() async throws {
        try await withFlatpakMoveService { guardd, child, services in
            let commit = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.status == 0, "\(approved.standardError)\n\(guardd.log)")
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(guardd.log.contains("moved into the Guard's installation \(services.installation) at commit \(commit)"),
                    "\(guardd.log)")

            // The child's copy is gone; the Guard's installation holds the approved commit.
            #expect(child.activeCommit() == nil)
            let guardBranch = services.guardBranch
            #expect(services.guardActive == commit)

            // familyctl status names the Guard's installation and needs no lock there.
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["id"] as? String == appID)
            #expect(flatpak["installation"] as? String == "familycontrols")
            #expect(flatpak["commit"] as? String == commit)
            #expect(flatpak["deployment"] as? String == "\(guardBranch)/\(commit)")
            #expect(row["path"] as? String == "\(services.installation)/app/\(appID)")
            #expect(row["lock"] as? String == "notNeeded")
            let table = try await guardd.familyctl(["status"]).requireSuccess().standardOutput
            #expect(table.contains("\(guardBranch)/\(commit)"), "\(table)")

            // The child can remove it from neither installation.
            let uninstall = try await child.flatpak(["uninstall", "-y", "--noninteractive", appID])
            #expect(uninstall.status != 0)
            let uninstallUser = try await child.uninstall()
            #expect(uninstallUser.status != 0)
            #expect(uninstallUser.standardError.contains("No installed refs found"), "\(uninstallUser.standardError)")
            #expect(services.guardActive == commit)

            // flatpak run runs the Guard's copy, and asked again the app is approved at once.
            let app = try await child.start()
            let info = try app.flatpakInfo()
            app.stop()
            #expect(info["Instance"]?["app-path"] == "\(guardBranch)/\(commit)/files")
            // On the Guard's copy of its runtime: the child's per-user copy, which Flatpak would prefer, is set aside.
            let runtime = try #require(services.guardRuntimeActive)
            #expect(info["Instance"]?["runtime-path"] == "\(services.installation)/\(FlatpakTestRepository.runtimeRef)/\(runtime)/files",
                    "\(info)")
            #expect(!FileManager.default.fileExists(atPath: "\(child.installation)/\(FlatpakTestRepository.runtimeRef)"))
            let again = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(again.standardOutput == "status: approved\n", "\(again.standardError)\n\(guardd.log)")

            // Revoked by the guardian: the approval is gone, the app stays runnable, and the log says how root removes it.
            let revoked = try await guardd.familyctlAsGuardian(["revoke", "--user", child.user.name, "--app", appID, "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(revoked.status == 0, "\(revoked.standardError)")
            #expect(try await guardd.statusJSON(user: child.user.name, appID: appID) == nil)
            #expect(guardd.log.contains("stays installed in the Guard's installation"), "\(guardd.log)")
            let afterRevoke = try await child.start()
            #expect(try afterRevoke.flatpakInfo()["Instance"]?["app-path"] == "\(guardBranch)/\(commit)/files")
            afterRevoke.stop()
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput != "status: approved\n", "not approved once revoked: \(asked.standardOutput)")

            // Approved again where it now is: pinned to its commit and remote as a moved app is,
            // so a later commit is judged as an update, not run as approved.
            let reapproved = try await guardd.flatpakRequestApproved(child)
            #expect(reapproved.standardOutput == "status: approved\n", "\(reapproved.standardError)\n\(guardd.log)")
            let pinned = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            #expect((pinned["flatpak"] as? [String: Any])?["installation"] as? String == "familycontrols", "\(pinned)")
        }
    }

    /// The test repository as a trusted remote: a `file://` folder only root can change, unsigned.
    private func trustingTheTestRepository(_ child: FlatpakChild) -> String {
        "TrustedRemote=\(FlatpakChild.remote) file://\(child.repository.repository)"
    }

    @Test func theApprovalFollowsTheChildsUpdateFromItsRemoteAndACopyFromAnotherRemoteWaitsForAGuardian() async throws {
        try await withFlatpakMoveService(extra: trustingTheTestRepository) { guardd, child, services in
            let first = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(services.guardActive == first)

            // The child updates the Guard's copy through the system helper: a newer commit of its remote.
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2) }
            try await child.flatpak(["update", "-y", "--noninteractive", appID]).requireSuccess()
            #expect(services.guardActive == second)
            let updated = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(updated.standardOutput == "status: approved\n", "\(updated.standardError)\n\(guardd.log)")
            #expect(guardd.log.contains("follows its update from \(first) to \(second)"), "\(guardd.log)")
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput == "{\"requests\":[]}\n",
                    "an update from the approved remote asks no one")
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["commit"] as? String == second)
            #expect(flatpak["deployment"] as? String == "\(services.guardBranch)/\(second)")

            // The same app ID from another remote, newer, installed over it by root: not the approved app.
            let other = try await offload { try FlatpakTestRepository() }
            defer { other.remove() }
            try await Task.sleep(for: .seconds(1.1))
            let foreign = try await offload { try other.publish(version: 9) }
            let environment: [String: String?] = ["FLATPAK_CONFIG_DIR": services.configurationDirectory]
            try await run("/usr/bin/flatpak", ["remote-add", "--installation=familycontrols", "--no-gpg-verify", "other",
                                               other.repository], environment: environment).requireSuccess()
            try await run("/usr/bin/flatpak", ["install", "--installation=familycontrols", "--reinstall", "-y",
                                               "--noninteractive", "other", appID], environment: environment).requireSuccess()
            #expect(services.guardActive == foreign)

            // Asked at that commit, the app waits: an update request, shown with both commits and remotes.
            let denied = try await decideUpdate(guardd, child, approve: false, from: second, to: foreign)
            #expect(denied.standardOutput != "status: approved\n", "\(denied.standardOutput)\(denied.standardError)")
            #expect(denied.standardError.contains("did not let this version of"), "\(denied.standardError)")
            #expect(guardd.log.contains("runs commit \(foreign), not the approved \(second); the approval does not follow it"),
                    "\(guardd.log)")
            let still = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            #expect((still["flatpak"] as? [String: Any])?["commit"] as? String == second, "a denied update moves nothing")

            // Asked again and let in by the guardian: the approval moves to the other remote's commit.
            let letIn = try await decideUpdate(guardd, child, approve: true, from: second, to: foreign)
            #expect(letIn.standardOutput == "status: approved\n", "\(letIn.standardError)\n\(guardd.log)")
            let moved = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            #expect((moved["flatpak"] as? [String: Any])?["commit"] as? String == foreign)
            let rows = try await guardd.auditRows()
            #expect(rows.contains("\(guardd.guardian.name) update \(child.user.name) \(appID) approved"), "\(rows)")
            let again = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(again.standardOutput == "status: approved\n", "approved at once at the commit let in: \(again.standardError)")
        }
    }

    /// Runs the child's demo at the Guard's installation's commit `to`,
    /// checks its `update` request names both commits and the other remote,
    /// and has the guardian approve or deny it.
    private func decideUpdate(_ guardd: GuardFixture, _ child: FlatpakChild, approve: Bool,
                              from: String, to: String) async throws -> ProcessResult {
        let app = try child.startDemo(socket: guardd.socket)
        defer { app.stop() }
        var request: [String: Any]?
        for _ in 0..<200 where request == nil {
            let listed = try await guardd.familyctlAsGuardian(["requests", "--json"])
            let object = try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
            request = (object?["requests"] as? [[String: Any]])?.first { $0["app"] as? String == appID }
            if request == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let found = try #require(request, "no update request came: \(app.standardError)\n\(guardd.log)")
        #expect(found["purpose"] as? String == "update", "\(found)")
        #expect((found["from"] as? String)?.contains("commit \(from.prefix(16)) of remote \(FlatpakChild.remote)") == true, "\(found)")
        #expect((found["to"] as? String)?.contains("commit \(to.prefix(16)) of remote other") == true, "\(found)")
        let table = try await guardd.familyctlAsGuardian(["requests"])
        #expect(table.standardOutput.contains(String(to.prefix(16))), "\(table.standardOutput)")
        let id = try #require(found["id"] as? Int)
        let decided = try await guardd.familyctlAsGuardian([approve ? "approve" : "deny", String(id), "--stdin"],
                                                           input: "\(guardd.guardian.password ?? "")\n")
        #expect(decided.status == 0, "\(decided.standardError)")
        app.endInput()
        let status = await app.exitStatus()
        return ProcessResult(status: status, standardOutput: app.standardOutput, standardError: app.standardError)
    }

    // MARK: - Only what a guardian was shown or an administrator configured is followed

    /// Whether the child's Flatpak can deploy from a remote that verifies
    /// signatures through the system helper: it pulls into a revokefs-fuse
    /// mount, which needs `/dev/fuse` open to every user (a desktop's 0666).
    private var childCanUseFuse: Bool {
        let mode = (try? FileManager.default.attributesOfItem(atPath: "/dev/fuse"))?[.posixPermissions] as? Int ?? 0
        return mode & 0o006 == 0o006
    }

    /// Deploys the remote's newest commit of the app in the Guard's
    /// installation as the child's `flatpak update` does through the system
    /// helper (polkit `app-update`); where `/dev/fuse` is closed to users,
    /// root's `flatpak update` stands in for the helper: the same pull, the
    /// same check of every signature against the Guard's remote's keyring.
    private func deployNewestCommit(_ child: FlatpakChild, _ services: FlatpakSystemServices) async throws -> ProcessResult {
        if childCanUseFuse { return try await child.flatpak(["update", "-y", "--noninteractive", appID]) }
        return try await run("/usr/bin/flatpak", ["update", "--installation=familycontrols", "-y", "--noninteractive", appID],
                             environment: ["FLATPAK_CONFIG_DIR": services.configurationDirectory])
    }

    /// The fingerprints of the keys in a keyring file, as gpg reads them.
    private func fingerprints(ofKeyring file: String) async throws -> [String] {
        let home = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: home) }
        let shown = try await run("/usr/bin/gpg", ["--homedir", home, "--batch", "--with-colons", "--show-keys", file])
        _ = try? await run("/usr/bin/gpgconf", ["--homedir", home, "--kill", "all"])
        return shown.standardOutput.split(separator: "\n").filter { $0.hasPrefix("fpr:") }
            .compactMap { $0.split(separator: ":", omittingEmptySubsequences: false).dropFirst(9).first.map(String.init) }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg"), "needs gpg (Debian's gnupg)"))
    func aKeyTheChildAddsToTheVendorsRemoteIsNotCarriedIntoTheGuardsInstallationSoTheChildsCommitIsNotFollowed() async throws {
        let keys = try makeTemporaryDirectory()
        chmod(keys, 0o755)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let vendor = try await offload { try FlatpakSigningKey(in: "\(keys)/vendor") }
        let childs = try await offload { try FlatpakSigningKey(in: "\(keys)/child") }
        defer { vendor.stop(); childs.stop() }
        try await withFlatpakMoveService(installed: false, prepare: { child in
            // The vendor's genuine signed remote; the child adds a key of their own to its per-user keyring.
            try await offload { try child.repository.sign(with: vendor) }
            try await child.flatpak(["remote-add", "--user", "--gpg-import=\(vendor.publicKey)", FlatpakChild.remote,
                                     child.repository.repository]).requireSuccess()
            try await child.flatpak(["remote-modify", "--user", "--gpg-import=\(childs.publicKey)", FlatpakChild.remote])
                .requireSuccess()
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", FlatpakChild.remote, appID]).requireSuccess()
        }, extra: { child in
            "TrustedRemote=\(FlatpakChild.remote) file://\(child.repository.repository) \(vendor.keyID)"
        }) { guardd, child, services in
            let first = try child.repository.commit()
            // The guardian is shown the remote, its URL and keys (the child's among them), and that the site trusts it.
            let (request, app) = try await guardd.pendingFlatpakRequest(child, alert: true)
            let shown = request["to"] as? String ?? ""
            #expect(shown.contains("remote \(FlatpakChild.remote) (file://\(child.repository.repository))"), "\(request)")
            #expect(shown.contains(vendor.keyID) && shown.contains(childs.keyID), "\(request)")
            #expect(shown.contains("trusted by this site"), "\(request)")
            let approved = try await guardd.decideFlatpakRequest(request, app, approve: true)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(services.guardActive == first)

            // The Guard's remote verifies with the vendor's key alone.
            let keyring = "\(services.installation)/repo/\(FlatpakChild.remote).trustedkeys.gpg"
            #expect(try await fingerprints(ofKeyring: keyring) == [vendor.keyID])

            // A commit the child signed, on top of the approved one, offered for the app's remote.
            try await Task.sleep(for: .seconds(1.1))
            let childsCommit = try await offload { try child.repository.publish(version: 2, signedWith: childs) }
            // Flatpak refuses it (or, finding no commit the remote's keys sign, updates nothing).
            let deployed = try await deployNewestCommit(child, services)
            #expect(services.guardActive == first, "the child's commit \(childsCommit) was deployed: \(deployed.standardError)")
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput == "status: approved\n", "still the approved commit: \(asked.standardError)")
            #expect(!guardd.log.contains("follows its update"), "\(guardd.log)")
        }
    }

    /// `python3 -m http.server` on 127.0.0.1, run as the child, serving `folder`; returns its URL and the process.
    private func serveAsChild(_ child: FlatpakChild, _ folder: String) async throws -> (url: String, process: Process) {
        for _ in 0..<20 {
            let port = Int.random(in: 20_000..<60_000)
            let command = child.commandLine(["/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1",
                                             "--directory", folder, String(port)])
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where process.isRunning {
                let probe = try await run("/usr/bin/python3", ["-c", "import socket; socket.create_connection(('127.0.0.1', \(port)), 1)"])
                if probe.status == 0 { return ("http://127.0.0.1:\(port)/", process) }
                try await Task.sleep(for: .milliseconds(50))
            }
            stopServer(process)
        }
        throw FixtureError("python3 -m http.server did not listen on 127.0.0.1")
    }

    private func stopServer(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg"), "needs gpg (Debian's gnupg)"),
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3 (its http.server serves the child's remote)"))
    func theChildsOwnRemoteNamedFlathubIsShownToTheGuardianAndEachOfItsNewCommitsNeedsOne() async throws {
        let keys = try makeTemporaryDirectory()
        chmod(keys, 0o755)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let childs = try await offload { try FlatpakSigningKey(in: "\(keys)/child") }
        defer { childs.stop() }
        var server: (url: String, process: Process)?
        defer { if let server { stopServer(server.process) } }
        try await withFlatpakMoveService(installed: false, prepare: { child in
            // A signed repository of the child's own, served by the child on 127.0.0.1, as their remote "flathub".
            try await offload { try child.repository.sign(with: childs) }
            let served = try await serveAsChild(child, child.repository.repository)
            server = served
            try await child.flatpak(["remote-add", "--user", "--gpg-import=\(childs.publicKey)", "flathub", served.url]).requireSuccess()
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", "flathub", appID]).requireSuccess()
        }) { guardd, child, services in
            let url = try #require(server?.url)
            let first = try child.repository.commit()
            // The guardian sees the remote, its URL and key, and that the site does not trust it.
            let (request, app) = try await guardd.pendingFlatpakRequest(child, alert: true)
            let shown = request["to"] as? String ?? ""
            #expect(shown.contains("commit \(first.prefix(16)) of remote flathub (\(url)), keys \(childs.keyID)"), "\(request)")
            #expect(shown.contains("not a remote this site trusts"), "\(request)")
            let table = try await guardd.familyctlAsGuardian(["requests"]).standardOutput
            #expect(table.contains(url), "\(table)")
            let approved = try await guardd.decideFlatpakRequest(request, app, approve: true)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(services.guardActive == first)

            // The child publishes a new commit and deploys it: the approval does not follow; a guardian is asked.
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2, signedWith: childs) }
            let deployed = try await deployNewestCommit(child, services)
            #expect(deployed.status == 0, "\(deployed.standardError)")
            #expect(services.guardActive == second)
            let (update, waiting) = try await guardd.pendingFlatpakRequest(child)
            #expect(update["purpose"] as? String == "update", "\(update)")
            #expect((update["to"] as? String)?.contains("commit \(second.prefix(16))") == true, "\(update)")
            #expect((update["to"] as? String)?.contains("is not one this site trusts") == true, "\(update)")
            let denied = try await guardd.decideFlatpakRequest(update, waiting, approve: false)
            #expect(denied.standardOutput != "status: approved\n", "\(denied.standardOutput)")
            #expect(!guardd.log.contains("follows its update"), "\(guardd.log)")
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            #expect((row["flatpak"] as? [String: Any])?["commit"] as? String == first, "\(row)")
        }
    }

    /// No systemd, so no move service at its socket (a container, the
    /// foreground mode): the Guard moves the app in a helper process of its
    /// own binary, and the child's `flatpak update` still works afterwards.
    @Test func withNoMoveServiceAtItsSocketTheGuardMovesTheAppInAHelperAndTheChildCanStillUpdateIt() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let services = try #require(child.services)
            let socket = "\(child.directory)/no-move.socket"
            // Without systemd the Guard runs without its unit's sandbox too.
            let guardd = try await offload { try GuardFixture(sandbox: nil) }
            do {
                try guardd.writeConfiguration(children: [child.user.name], extra: """

                    [Flatpak]
                    MoveService=\(socket)
                    GuardInstallation=\(services.installation)
                    \(trustingTheTestRepository(child))
                    """)
                let commit = try child.repository.commit()
                // A move of this app a kill interrupted before its first step: its journal
                // is left, and a move that did not recover first could not begin its own.
                let moves = "\(guardd.stateDirectory)/flatpak-moves"
                for folder in [guardd.stateDirectory, moves] {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false,
                                                            attributes: [.posixPermissions: 0o700])
                }
                let journal = "\(moves)/\(child.user.uid)-\(appID)-\(FlatpakTestRepository.architecture)-\(FlatpakTestRepository.branch).move"
                try ([String(child.user.uid), child.home, appID, FlatpakTestRepository.architecture, FlatpakTestRepository.branch,
                      commit].joined(separator: "\t") + "\n").write(toFile: journal, atomically: false, encoding: .utf8)
                try await guardd.start(environment: ["FLATPAK_CONFIG_DIR": services.configurationDirectory])
                let approved = try await guardd.flatpakRequestApproved(child)
                #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
                #expect(guardd.log.contains("no move service at \(socket); \(appID) for \(child.user.name) is moved by a helper"),
                        "\(guardd.log)")
                #expect(guardd.log.contains("moved into the Guard's installation \(services.installation) at commit \(commit)"),
                        "\(guardd.log)")
                #expect(child.activeCommit() == nil)
                #expect(services.guardActive == commit)
                #expect(!FileManager.default.fileExists(atPath: journal), "the interrupted move was recovered, this one done")
                let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
                #expect(row["lock"] as? String == "notNeeded")

                // Commit times are in seconds: the update's must be later.
                try await Task.sleep(for: .seconds(1.1))
                let second = try await offload { try child.repository.publish(version: 2) }
                let updated = try await child.flatpak(["update", "-y", "--noninteractive", appID])
                #expect(updated.status == 0, "\(updated.standardError)")
                #expect(services.guardActive == second)
                try await offload { guardd.tearDown() }
            } catch {
                try await offload { guardd.tearDown() }
                throw error
            }
        }
    }
}

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

    /// Runs `body` with a Flatpak child on a system bus with polkitd and the
    /// system helper, the real move service listening on its socket under
    /// `systemd-socket-activate`, and a real Guard configured with it.
    private func withMoveService(_ body: (GuardFixture, FlatpakChild, FlatpakSystemServices) async throws -> Void) async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let services = try #require(child.services)
            let socket = "\(child.directory)/move.socket"
            let pidFile = "\(child.directory)/move-service.pid"
            try FileManager.default.createDirectory(atPath: "\(child.directory)/state", withIntermediateDirectories: true)
            // Detached (setsid), its pid in a file, ended by that pid, as in FlatpakMoveTests.
            let service = ["/usr/bin/systemd-socket-activate", "--listen=\(socket)", "--accept", "--inetd",
                           productPath("familycontrolsd"), "--flatpak-move-connection",
                           "--state-dir", "\(child.directory)/state", "--installation-path", services.installation,
                           "--flatpak-config-dir", services.configurationDirectory]
            try await run("/bin/sh", ["-c", "setsid \"$@\" </dev/null >/dev/null 2>&1 & echo $! > '\(pidFile)'", "service"] + service)
                .requireSuccess()
            defer {
                if let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                    kill(pid, SIGKILL)
                }
            }
            for _ in 0..<200 where !FileManager.default.fileExists(atPath: socket) { try await Task.sleep(for: .milliseconds(25)) }

            let guardd = try await offload { try GuardFixture(sandbox: GuardSandbox.fromEnvironment) }
            do {
                try guardd.writeConfiguration(children: [child.user.name], extra: """

                    [Flatpak]
                    MoveService=\(socket)
                    GuardInstallation=\(services.installation)
                    """)
                try await guardd.start()
                try await body(guardd, child, services)
                try await offload { guardd.tearDown() }
            } catch {
                try await offload { guardd.tearDown() }
                throw error
            }
        }
    }

    private func guardBranch(_ services: FlatpakSystemServices) -> String {
        "\(services.installation)/app/\(appID)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)"
    }

    private func guardActive(_ services: FlatpakSystemServices) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(guardBranch(services))/active")
    }

    @Test func anApprovedPerUserAppIsMovedIntoTheGuardsInstallationAndCannotBeUninstalled() async throws {
        try await withMoveService { guardd, child, services in
            let commit = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.status == 0, "\(approved.standardError)\n\(guardd.log)")
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(guardd.log.contains("moved into the Guard's installation \(services.installation) at commit \(commit)"),
                    "\(guardd.log)")

            // The child's copy is gone; the Guard's installation holds the approved commit.
            #expect(child.activeCommit() == nil)
            let guardBranch = guardBranch(services)
            #expect(guardActive(services) == commit)

            // familyctl status names the Guard's installation and needs no lock there.
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["id"] as? String == appID)
            #expect(flatpak["installation"] as? String == "familycontrols")
            #expect(flatpak["commit"] as? String == commit)
            #expect(flatpak["deployment"] as? String == "\(guardBranch)/\(commit)")
            #expect(row["path"] as? String == "\(services.installation)/app/\(appID)")
            #expect(row["lock"] as? String == "not needed: a root-owned Flatpak installation")
            let table = try await guardd.familyctl(["status"]).requireSuccess().standardOutput
            #expect(table.contains("\(guardBranch)/\(commit)"), "\(table)")

            // The child can remove it from neither installation.
            let uninstall = try await child.flatpak(["uninstall", "-y", "--noninteractive", appID])
            #expect(uninstall.status != 0)
            let uninstallUser = try await child.uninstall()
            #expect(uninstallUser.status != 0)
            #expect(uninstallUser.standardError.contains("No installed refs found"), "\(uninstallUser.standardError)")
            #expect(guardActive(services) == commit)

            // flatpak run runs the Guard's copy, and asked again the app is approved at once.
            let app = try await child.start()
            let info = try app.flatpakInfo()
            app.stop()
            #expect(info["Instance"]?["app-path"] == "\(guardBranch)/\(commit)/files")
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

    @Test func theApprovalFollowsTheChildsUpdateFromItsRemoteAndACopyFromAnotherRemoteWaitsForAGuardian() async throws {
        try await withMoveService { guardd, child, services in
            let first = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(guardActive(services) == first)

            // The child updates the Guard's copy through the system helper: a newer commit of its remote.
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2) }
            try await child.flatpak(["update", "-y", "--noninteractive", appID]).requireSuccess()
            #expect(guardActive(services) == second)
            let updated = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(updated.standardOutput == "status: approved\n", "\(updated.standardError)\n\(guardd.log)")
            #expect(guardd.log.contains("follows its update from \(first) to \(second)"), "\(guardd.log)")
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput == "{\"requests\":[]}\n",
                    "an update from the approved remote asks no one")
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["commit"] as? String == second)
            #expect(flatpak["deployment"] as? String == "\(guardBranch(services))/\(second)")

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
            #expect(guardActive(services) == foreign)

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
                #expect(guardActive(services) == commit)
                #expect(!FileManager.default.fileExists(atPath: journal), "the interrupted move was recovered, this one done")
                let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
                #expect(row["lock"] as? String == "not needed: a root-owned Flatpak installation")

                // Commit times are in seconds: the update's must be later.
                try await Task.sleep(for: .seconds(1.1))
                let second = try await offload { try child.repository.publish(version: 2) }
                let updated = try await child.flatpak(["update", "-y", "--noninteractive", appID])
                #expect(updated.status == 0, "\(updated.standardError)")
                #expect(guardActive(services) == second)
                try await offload { guardd.tearDown() }
            } catch {
                try await offload { guardd.tearDown() }
                throw error
            }
        }
    }
}

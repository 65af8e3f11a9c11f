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
        }
    }

    @Test func theApprovalFollowsTheChildsUpdateFromItsRemoteButNotACopyFromAnotherRemote() async throws {
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
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput != "status: approved\n", "\(asked.standardOutput)\(asked.standardError)")
            #expect(asked.standardError.contains("already approved for \(child.user.name) in another folder (\(guardBranch(services))/\(second))"),
                    "\(asked.standardError)")
            #expect(guardd.log.contains("runs commit \(foreign), not the approved \(second); the approval does not follow it"),
                    "\(guardd.log)")
            let still = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            #expect((still["flatpak"] as? [String: Any])?["commit"] as? String == second)
        }
    }

    @Test func withNoMoveServiceAtItsSocketTheApprovalLocksInPlaceAndTheLogSaysSo() async throws {
        // The child's Flatpak reads the test's own FLATPAK_CONFIG_DIR (systemHelper), as in the test above.
        try await withFlatpakChild(systemHelper: true) { child in
            let socket = "\(child.directory)/no-move.socket"
            let guardd = try await offload { try GuardFixture(sandbox: GuardSandbox.fromEnvironment) }
            do {
                try guardd.writeConfiguration(children: [child.user.name], extra: "\n[Flatpak]\nMoveService=\(socket)\n")
                try await guardd.start()
                let commit = try child.repository.commit()
                let approved = try await guardd.flatpakRequestApproved(child)
                #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
                #expect(guardd.log.contains("is locked in place (no move service at \(socket))"), "\(guardd.log)")
                #expect(child.activeCommit() == commit)
                let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
                #expect(row["lock"] as? String == "locked")
                #expect(row["path"] as? String == child.appFolder)
                try await offload { guardd.tearDown() }
            } catch {
                try await offload { guardd.tearDown() }
                throw error
            }
        }
    }
}

import Foundation
import Testing
import TestSupport

/// What the immutable attribute does to a per-user Flatpak installation when
/// it is set in place, by hand, with no Guard: the measurements behind the
/// lock's design for Flatpak apps (ARCHITECTURE.md, "Flatpak apps: the
/// lock's design (measured)"). Each test is Flatpak's behaviour today, run
/// by the real child with the real flatpak.
@Suite(.serialized, .enabled(if: canRunFlatpak, "needs root, useradd, and Debian's flatpak and dbus (.ci/run installs them)"))
struct FlatpakInPlaceLockTests {
    let appID = FlatpakChild.appID

    private func chattr(_ arguments: [String]) async throws {
        try await run("/usr/bin/chattr", arguments).requireSuccess()
    }

    /// `chattr +i` on every folder and file under `path`, and `path`: the
    /// attribute cannot be set on a symlink (`active`, `current`), only on
    /// the folder holding it.
    private func lockTree(_ path: String) async throws {
        try await run("/usr/bin/find", [path, "!", "-type", "l", "-exec", "/usr/bin/chattr", "+i", "{}", "+"])
            .requireSuccess()
    }

    @Test func lockingOnlyTheDeploymentLetsUninstallRemoveTheActiveLinkFirst() async throws {
        try await withFlatpakChild { child in
            let commit = try child.repository.commit()
            try await chattr(["-R", "+i", child.deployment(commit)])

            let uninstall = try await child.uninstall()
            #expect(uninstall.status != 0)
            #expect(uninstall.standardError.contains("Operation not permitted"))
            // The deployment's files stay, but Flatpak no longer knows the app.
            #expect(FileManager.default.fileExists(atPath: "\(child.deployment(commit))/files/bin/\(FlatpakTestRepository.command)"))
            #expect(child.activeCommit() == nil)
            let run = try await child.flatpak(["run", appID])
            #expect(run.status != 0)
            #expect(run.standardError.contains("not installed"))
        }
    }

    @Test func lockingTheAppsWholeFolderKeepsItRunnableButNoUpdateCanDeploy() async throws {
        try await withFlatpakChild { child in
            let first = try child.repository.commit()
            try await lockTree("\(child.installation)/app/\(appID)")

            let uninstall = try await child.uninstall()
            #expect(uninstall.status != 0)
            #expect(uninstall.standardError.contains("active: Operation not permitted"))
            #expect(child.activeCommit() == first)
            let app = try await child.start()
            app.stop()

            let second = try await offload { try child.repository.publish(version: 2) }
            let update = try await child.update()
            #expect(update.status != 0)
            #expect(!FileManager.default.fileExists(atPath: child.deployment(second)))
            #expect(update.standardError.contains("Can't create deploy directory"))
            #expect(child.activeCommit() == first)
        }
    }

    @Test func anAppendOnlyBranchFolderTakesTheNewDeploymentButNotTheSwitchToIt() async throws {
        try await withFlatpakChild { child in
            let first = try child.repository.commit()
            try await chattr(["-R", "+i", child.deployment(first)])
            try await chattr(["+a", child.branchFolder])
            try await chattr(["+i", "\(child.installation)/app/\(appID)/\(FlatpakTestRepository.architecture)",
                              "\(child.installation)/app/\(appID)"])

            #expect(try await child.uninstall().status != 0)
            #expect(child.activeCommit() == first)
            let second = try await offload { try child.repository.publish(version: 2) }
            let update = try await child.update()
            #expect(update.status != 0)
            #expect(update.standardError.contains("Error moving file"))
            #expect(child.activeCommit() == first)
            // The new commit was checked out beside the old, under a temporary name, and left there.
            let left = try FileManager.default.contentsOfDirectory(atPath: child.branchFolder)
            #expect(left.contains { $0.hasPrefix(".\(second)-") })
        }
    }

    @Test func theChildMovesTheInstallationAwayFromUnderALockedApp() async throws {
        try await withFlatpakChild { child in
            try await lockTree("\(child.installation)/app/\(appID)")

            // ~/.local is the child's own folder: no lock inside it stops its rename.
            try await child.shell("mv \"$HOME/.local\" \"$HOME/.local.moved\"").requireSuccess()
            let run = try await child.flatpak(["run", appID])
            #expect(run.status != 0)
            #expect(run.standardError.contains("not installed"))
        }
    }
}

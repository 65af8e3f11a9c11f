import Foundation
import Testing
import TestSupport

/// A child's Flatpak app, the real app library in the real Flatpak sandbox,
/// asks the real Guard: identified from its sandbox, approved by a guardian
/// from their own session, locked in place, released by a revoke.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"))
struct FlatpakAppTests {
    let appID = FlatpakChild.appID

    @Test func aChildsFlatpakAppIsApprovedByAGuardianAndCannotBeUninstalledUntilRevoked() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let commit = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.status == 0, "\(approved.standardError)\n\(guardd.log)")
            #expect(approved.standardOutput == "status: approved\n")

            // familyctl status names the Flatpak app and the very deployment approved.
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["id"] as? String == appID)
            #expect(flatpak["installation"] as? String == "user")
            #expect(flatpak["commit"] as? String == commit)
            #expect(flatpak["deployment"] as? String == child.deployment(commit))
            #expect(row["path"] as? String == child.appFolder)
            #expect(row["lock"] as? String == "locked")
            let table = try await guardd.familyctl(["status"]).requireSuccess().standardOutput
            #expect(table.contains("flatpak user \(appID) \(commit.prefix(12)): \(child.deployment(commit))"))

            // app/ID and everything in it is immutable; the child's uninstall changes nothing.
            let locked = try TreeSnapshot.take(child.appFolder)
            let unlocked = locked.items.filter { !$0.isSymlink && !$0.isImmutable }
            #expect(unlocked.isEmpty, "\(unlocked)")
            let uninstall = try await child.uninstall()
            #expect(uninstall.status != 0)
            #expect(child.activeCommit() == commit)
            let afterUninstall = try TreeSnapshot.take(child.appFolder)
            #expect(afterUninstall == locked)
            let running = try await child.start()
            running.stop()
            // The check of every lock finds this one whole.
            let verified = try await guardd.familyctl(["locks", "verify", "--no-repair"])
            #expect(verified.status == 0 && verified.standardOutput.contains("every lock is whole"),
                    "\(verified.standardOutput)\(verified.standardError)")
            // Asked again, the app is approved at once.
            let again = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(again.standardOutput == "status: approved\n", "\(again.standardError)")

            // A revoke releases exactly what the lock set; then the child may uninstall.
            try await guardd.familyctl(["revoke", "--user", child.user.name, "--app", appID]).requireSuccess()
            let released = try TreeSnapshot.take(child.appFolder).items.filter(\.isImmutable)
            #expect(released.isEmpty, "\(released)")
            try await child.uninstall().requireSuccess()
            #expect(child.activeCommit() == nil)
        }
    }
}

/// A child runs bubblewrap themself with a `.flatpak-info` of their own
/// making. What it gains, and what it cannot (ARCHITECTURE.md, "Identity:
/// Flatpak apps").
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"))
struct FlatpakForgedSandboxTests {
    let appID = FlatpakChild.appID

    @Test func aForgedSandboxIsTheAppOnlyWhileItRunsTheDeploymentsOwnCode() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let commit = try child.repository.commit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)")

            // The .flatpak-info of a real run of the app, written by the child.
            let running = try await child.start()
            let info = "\(child.home)/forged-flatpak-info"
            try String(contentsOfFile: "/proc/\(running.pid)/root/.flatpak-info", encoding: .utf8)
                .write(toFile: info, atomically: true, encoding: .utf8)
            running.stop()
            chown(info, child.user.uid, child.user.gid)
            let files = "\(child.deployment(commit))/files"

            // The deployment's own code, unchanged, in the child's sandbox: that app.
            let own = try await child.runForgedSandbox(appFiles: files, runtime: child.runtimeFiles, info: info,
                                                       socket: guardd.socket)
            #expect(own.standardOutput == "status: approved\n", "\(own.standardError)\n\(guardd.log)")

            // The child's own copy of the program at /app: another file, never that app.
            let copiedApp = try await child.copyAsChild(files, to: "forged-app")
            let program = try await child.runForgedSandbox(appFiles: copiedApp, runtime: child.runtimeFiles, info: info,
                                                           socket: guardd.socket)
            #expect(program.status != 0)
            #expect(program.standardOutput != "status: approved\n")
            #expect(guardd.log.contains("is not the file at its path in the deployment \(child.deployment(commit))"),
                    "\(guardd.log)")

            // The app's own program over the child's copy of the runtime's libraries: foreign code.
            let copiedRuntime = try await child.copyAsChild(child.runtimeFiles, to: "forged-runtime")
            let library = try await child.runForgedSandbox(appFiles: files, runtime: copiedRuntime, info: info,
                                                           socket: guardd.socket)
            #expect(library.status != 0)
            #expect(library.standardOutput != "status: approved\n")
            #expect(guardd.log.contains("which is neither the app's nor only root's to change"), "\(guardd.log)")
        }
    }
}

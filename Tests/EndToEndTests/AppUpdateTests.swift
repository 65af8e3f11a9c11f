import Foundation
import Testing
import TestSupport

/// Updates of an approved app in an app root, end to end: the real Guard on
/// a real socket, the real demo app run as the child asking for the swap
/// (`familycontrols-demo update`), the child staging the new version beside
/// the approved folder as `ROOT/.APPID.update`, a real guardian deciding
/// with `familyctl` through the real PAM stack.
@Suite(.serialized) struct AppUpdateTests {
    @Test func aSignedUpdateSwapsInLockedAndTheOldVersionIsReleasedToTheChild() async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()

            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 0, "\(updated.standardError)")
            #expect(updated.standardOutput == "update: swapped in, signed\n")
            let app = guardd.appDirectory
            #expect(try String(contentsOfFile: "\(app)/VERSION", encoding: .utf8) == "2\n")
            #expect(try TreeSnapshot.take(app).unlockedItems().isEmpty, "every file of the new version is locked")
            #expect(try await guardd.shell("rm -rf '\(app)'").status != 0)
            #expect(FileManager.default.fileExists(atPath: "\(app)/VERSION"))
            // The old version is back at the staging name, released, and the child's to remove.
            let old = guardd.stagingDirectory
            #expect(try String(contentsOfFile: "\(old)/VERSION", encoding: .utf8) == "1\n")
            #expect(try TreeSnapshot.take(old).items.allSatisfy { !$0.isImmutable && $0.uid == guardd.child.uid })
            #expect(try await guardd.shell("rm -rf '\(old)'").status == 0)

            #expect(try await guardd.storedStatus() == "approved")
            let (approved, _) = try await guardd.isApproved(executable: guardd.appExecutable)
            #expect(approved, "the approval follows the new folder")
            let rows = try await guardd.auditRows()
            #expect(rows.contains("\(guardd.child.name) update \(guardd.child.name) \(GuardFixture.appID) swapped in"))
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
        }
    }

    @Test func anUnsignedUpdateWaitsForAGuardianWhoApprovesIt() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: nil).requireSuccess()
            let running = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                      ["update", "--stdin"]))
            defer { running.stop() }
            let id = try await guardd.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests"])
            #expect(listed.standardOutput.contains("be updated"), "\(listed.standardOutput)")
            #expect(listed.standardOutput.contains("request \(id) updates \(GuardFixture.appID) from manifest "))
            #expect(listed.standardOutput.contains("to 2 (manifest "))
            let json = try await guardd.familyctlAsGuardian(["requests", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
            let request = try #require((object?["requests"] as? [[String: Any]])?.first)
            #expect(request["purpose"] as? String == "update")
            #expect((request["from"] as? String)?.hasPrefix("manifest ") == true)
            #expect((request["to"] as? String)?.hasPrefix("2 (manifest ") == true)
            // Staged and locked while it waits: the child cannot change what the guardian is asked about.
            #expect(try await guardd.shell("echo 3 > '\(guardd.stagingDirectory)/VERSION'").status != 0)
            // A check of every lock meanwhile leaves the staged version's alone, though no approval covers it.
            _ = try await guardd.familyctl(["locks", "verify"])
            #expect(try TreeSnapshot.take(guardd.stagingDirectory).unlockedItems().isEmpty)
            #expect(try await guardd.shell("echo 3 > '\(guardd.stagingDirectory)/VERSION'").status != 0)

            let decided = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            #expect(await running.exitStatus() == 0, "\(running.standardError)")
            #expect(running.standardOutput == "update: swapped in, approved by a parent or guardian\n")
            #expect(try String(contentsOfFile: "\(guardd.appDirectory)/VERSION", encoding: .utf8) == "2\n")
            #expect(try TreeSnapshot.take(guardd.appDirectory).unlockedItems().isEmpty)
            #expect(try TreeSnapshot.take(guardd.stagingDirectory).items.allSatisfy { !$0.isImmutable })
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.auditRows().contains(
                "\(guardd.guardian.name) update \(guardd.child.name) \(GuardFixture.appID) swapped in"))
        }
    }

    @Test func anUnsignedUpdateDeniedChangesNothingAndReleasesTheStagedFolder() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let before = try TreeSnapshot.take(guardd.appDirectory)
            try await guardd.stageUpdate(version: "2", signingKey: nil).requireSuccess()
            let running = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                      ["update", "--stdin"]))
            defer { running.stop() }
            let id = try await guardd.waitForPendingRequest()
            let decided = try await guardd.familyctlAsGuardian(["deny", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            #expect(await running.exitStatus() == 1)
            #expect(running.standardError.contains("did not let the new version"), "\(running.standardError)")
            #expect(try TreeSnapshot.take(guardd.appDirectory) == before)
            #expect(try TreeSnapshot.take(guardd.stagingDirectory).items.allSatisfy { !$0.isImmutable })
            #expect(try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'").status == 0)
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
        }
    }

    /// The approved version's key signs the staged one, yet it drops the
    /// capability, or brings another app's desktop entry: refused, with no
    /// request a guardian could approve.
    @Test(arguments: ["drop-capability", "change-app-id"])
    func aStagedVersionThatDropsTheCapabilityOrChangesTheAppIDIsRefused(_ change: String) async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            let before = try TreeSnapshot.take(guardd.appDirectory)
            let staged = guardd.stagingDirectory
            let edit = change == "drop-capability"
                ? "sed -i 's/^X-FamilyControls=true/X-FamilyControls=false/' '\(staged)/\(GuardFixture.appID).desktop'"
                : "mv '\(staged)/\(GuardFixture.appID).desktop' '\(staged)/org.example.Other.desktop'"
            try await guardd.stageUpdate(version: "2", signingKey: key, edit: edit).requireSuccess()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 1)
            let reason = change == "drop-capability" ? "cannot remove the capability" : "cannot change the app ID"
            #expect(updated.standardError.contains(reason), "\(updated.standardError)")
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput == "{\"requests\":[]}\n")
            #expect(try TreeSnapshot.take(guardd.appDirectory) == before)
            #expect(try TreeSnapshot.take(staged).items.allSatisfy { !$0.isImmutable })
            #expect(try await guardd.auditRows().contains(
                "\(guardd.child.name) update \(guardd.child.name) \(GuardFixture.appID) refused"))
        }
    }

    /// Killed at each step of the swap, the Guard restarts to the old version
    /// or the new one, whole and locked, with the record and the lock
    /// journal saying the same, and the other version released.
    @Test(arguments: ["after-lock", "before-exchange", "after-exchange", "after-record"])
    func theGuardKilledMidSwapLeavesOneWholeLockedVersion(_ step: String) async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()
            guardd.stop()
            try await guardd.start(environment: ["FAMILYCONTROLSD_TEST_UPDATE_PAUSE": step])
            try await guardd.waitUntilReconciled()
            let running = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                      ["update", "--stdin"]))
            defer { running.stop() }
            #expect(await eventually { guardd.log.contains("update: paused at \(step)") }, "never paused at \(step)")
            guardd.stop(signal: SIGKILL)
            _ = await running.exitStatus()
            try await guardd.start()
            try await guardd.waitUntilReconciled()

            let app = guardd.appDirectory
            let version = try String(contentsOfFile: "\(app)/VERSION", encoding: .utf8)
            let swapped = ["after-exchange", "after-record"].contains(step)
            #expect(version == (swapped ? "2\n" : "1\n"), "step \(step)")
            #expect(try TreeSnapshot.take(app).unlockedItems().isEmpty, "step \(step): the app is not locked whole")
            #expect(try TreeSnapshot.take(guardd.stagingDirectory).items.allSatisfy { !$0.isImmutable },
                    "step \(step): the other version is not released")
            #expect(try await guardd.storedStatus() == "approved")
            let (approved, result) = try await guardd.isApproved(executable: guardd.appExecutable)
            let said = "status \(result.status), \(result.standardOutput)\(result.standardError)\n\(guardd.log.suffix(3000))"
            #expect(approved, "step \(step): the record does not match the folder: \(said)")
            let verified = try await guardd.familyctl(["locks", "verify"])
            #expect(verified.status == 0, "step \(step): \(verified.standardOutput)")
            // The version in place is the highest the approval has had, whether the Guard recorded the swap or finished it.
            let highest = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                            "SELECT update_version FROM authorizations"])
            #expect(highest.standardOutput == (swapped ? "2\n" : "1\n"), "step \(step)")
        }
    }

    /// The rename in the child's app root needs write permission there,
    /// which root has only through CAP_DAC_OVERRIDE: without it the update
    /// says so, and the approved version stays, locked.
    @Test func aGuardWithoutDACOverrideSaysSoAndKeepsTheApprovedVersion() async throws {
        try await withGuard(sandbox: try .unit(without: "CAP_DAC_OVERRIDE")) { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            let before = try TreeSnapshot.take(guardd.appDirectory)
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 1)
            #expect(updated.standardError.contains("needs CAP_DAC_OVERRIDE"), "\(updated.standardError)")
            #expect(try TreeSnapshot.take(guardd.appDirectory) == before)
            #expect(try TreeSnapshot.take(guardd.stagingDirectory).items.allSatisfy { !$0.isImmutable })
            #expect(try await guardd.storedStatus() == "approved")
        }
    }

    @Test func hostileStagedFoldersAreRefusedWithAClearErrorAndNothingIsLost() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let app = guardd.appDirectory
            let before = try TreeSnapshot.take(app)
            let staged = guardd.stagingDirectory
            /// The demo's update, as the child, with `stage` run first (as the child unless `root`).
            func attempt(_ stage: String, root: Bool = false) async throws -> ProcessResult {
                if root {
                    try await sh(stage).requireSuccess()
                } else {
                    try await guardd.shell(stage).requireSuccess()
                }
                return try await guardd.app(["update", "--stdin"])
            }

            let missing = try await guardd.app(["update", "--stdin"])
            #expect(missing.status == 1)
            #expect(missing.standardError.contains("no update is staged"), "\(missing.standardError)")

            let link = try await attempt("mkdir -p /tmp/\(guardd.child.name)-elsewhere && ln -s /tmp/\(guardd.child.name)-elsewhere '\(staged)'")
            #expect(link.status == 1)
            #expect(link.standardError.contains("is a symbolic link"), "\(link.standardError)")
            try await guardd.shell("rm -f '\(staged)'; rm -rf /tmp/\(guardd.child.name)-elsewhere").requireSuccess()

            let notTheirs = try await attempt("mkdir '\(staged)' && cp -a '\(app)/.' '\(staged)/' && chown -R \(guardd.adult.name) '\(staged)'", root: true)
            #expect(notTheirs.status == 1)
            #expect(notTheirs.standardError.contains("it belongs to uid \(guardd.adult.uid)"), "\(notTheirs.standardError)")
            try await sh("rm -rf '\(staged)'").requireSuccess()

            let otherFilesystem = try await attempt("""
                mkdir '\(staged)' && mount -t tmpfs -o size=256m tmpfs '\(staged)' && cp -a '\(app)/.' '\(staged)/' \
                && chown -R \(guardd.child.name):\(guardd.child.name) '\(staged)'
                """, root: true)
            #expect(otherFilesystem.status == 1)
            #expect(otherFilesystem.standardError.contains("on another filesystem"), "\(otherFilesystem.standardError)")
            try await sh("umount '\(staged)' && rmdir '\(staged)'").requireSuccess()

            // Deeper than any version may be: refused, and released.
            let deep = (0..<140).map { "d\($0)" }.joined(separator: "/")
            let tooDeep = try await attempt("cp -a '\(app)' '\(staged)' && mkdir -p '\(staged)/\(deep)'")
            #expect(tooDeep.status == 1)
            #expect(tooDeep.standardError.contains("cannot be read as a version"), "\(tooDeep.standardError)")
            #expect(try TreeSnapshot.take(staged).items.allSatisfy { !$0.isImmutable })
            try await guardd.shell("rm -rf '\(staged)'").requireSuccess()

            // Huge: a sparse file larger than a version may hold, read only up to the bound.
            let huge = try await attempt("cp -a '\(app)' '\(staged)' && truncate -s 9G '\(staged)/huge'")
            #expect(huge.status == 1)
            #expect(huge.standardError.contains("more than 8 GiB together"), "\(huge.standardError)")
            // Released: the child removes it (a snapshot would read all 9 GiB).
            #expect(try await guardd.shell("rm '\(staged)/huge'").status == 0)
            try await guardd.shell("rm -rf '\(staged)'").requireSuccess()

            // Still being written by the child: the lock before the check sees the writer.
            try await guardd.stageUpdate(version: "2", signingKey: nil).requireSuccess()
            let writer = try Process.run(URL(fileURLWithPath: "/usr/bin/setpriv"), arguments: [
                "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                "/bin/sh", "-c", "exec 3>>'\(staged)/VERSION'; sleep 60"])
            defer { writer.terminate() }
            try await Task.sleep(for: .milliseconds(300))
            let written = try await guardd.app(["update", "--stdin"])
            #expect(written.status == 1)
            #expect(written.standardError.contains("cannot be locked whole"), "\(written.standardError)")
            #expect(try TreeSnapshot.take(staged).items.allSatisfy { !$0.isImmutable })
            writer.terminate()

            #expect(try TreeSnapshot.take(app) == before, "the approved version is untouched")
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
        }
    }
}

extension GuardFixture {
    /// `ROOT/.APPID.update`, beside the child's approved demo.
    var stagingDirectory: String { "\(appsRoot)/\(child.name)/.\(Self.appID).update" }

    /// Makes an update key in a file the child owns (the app's developer's
    /// key, or the child's own).
    /// - Returns: the secret key file's path and the key, `ed25519:BASE64`.
    func makeUpdateKey(_ name: String = "update") async throws -> (file: String, key: String) {
        let file = "\(directory)/\(name)-\(child.name).key"
        let made = try await run(productPath("familycontrols-sign"), ["keygen", file]).requireSuccess()
        let line = made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("X-FamilyControls-UpdateKey=ed25519:"))
        try await sh("chown \(child.name):\(child.name) '\(file)'").requireSuccess()
        return (file, String(line.dropFirst("X-FamilyControls-UpdateKey=".count)))
    }

    /// Makes an update key the child's (the app's developer, here), declares
    /// it in the child's demo's desktop entry, and makes it version 1
    /// (`VERSION` and `X-FamilyControls-Version=`).
    /// - Returns: the secret key file's path.
    func declareUpdateKey() async throws -> String {
        let (file, key) = try await makeUpdateKey()
        try await sh("""
            set -e
            echo 'X-FamilyControls-UpdateKey=\(key)' >> '\(appDirectory)/\(Self.appID).desktop'
            echo 'X-FamilyControls-Version=1' >> '\(appDirectory)/\(Self.appID).desktop'
            echo 1 > '\(appDirectory)/VERSION'
            chown \(child.name):\(child.name) '\(appDirectory)/VERSION'
            """).requireSuccess()
        return file
    }

    /// As the child: copies the approved demo to the staging folder, makes
    /// it version `version` (its one `X-FamilyControls-Version=`), runs
    /// `edit`, and signs it with `signingKey`.
    func stageUpdate(version: String, signingKey: String?, edit: String = "true") async throws -> ProcessResult {
        let staged = stagingDirectory
        let sign = signingKey.map { "'\(productPath("familycontrols-sign"))' sign-update '\($0)' '\(staged)'" } ?? "true"
        return try await shell("""
            set -e
            cp -a '\(appDirectory)' '\(staged)'
            rm -f '\(staged)/.familycontrols-signature'
            echo \(version) > '\(staged)/VERSION'
            sed -i '/^X-FamilyControls-Version=/d' '\(staged)/\(Self.appID).desktop'
            echo 'X-FamilyControls-Version=\(version)' >> '\(staged)/\(Self.appID).desktop'
            \(edit)
            \(sign)
            """)
    }

    /// A sed command, as the child, that makes the desktop entry in `folder` declare `key` as its only update key.
    func replacingUpdateKey(in folder: String, with key: String) -> String {
        "sed -i 's|^X-FamilyControls-UpdateKey=.*|X-FamilyControls-UpdateKey=\(key)|' '\(folder)/\(Self.appID).desktop'"
    }
}

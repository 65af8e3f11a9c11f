import Foundation
import Testing
import TestSupport

/// What an approval carries forward to an app's updates: only the update
/// key a guardian was shown (or an administrator configured), and only
/// versions newer than every one it has had. The real Guard, the real demo
/// app run as the child (`familycontrols-demo update`), the child signing
/// with `familycontrols-sign`, a real guardian deciding with `familyctl`.
@Suite(.serialized) struct AppUpdateTrustTests {
    /// The requests a guardian sees, as `familyctl requests --json` gives them.
    private func requests(_ guardd: GuardFixture) async throws -> [[String: Any]] {
        let json = try await guardd.familyctlAsGuardian(["requests", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        return object?["requests"] as? [[String: Any]] ?? []
    }

    /// Runs the demo's update as the child, waits for its update request,
    /// checks it, then denies it: the approved version stays.
    private func expectUpdateWaitsForGuardian(_ guardd: GuardFixture,
                                              _ check: ([String: Any], String) async throws -> Void) async throws {
        let running = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                  ["update", "--stdin"]))
        defer { running.stop() }
        let id = try await guardd.waitForPendingRequest()
        let request = try #require(try await requests(guardd).first)
        #expect(request["purpose"] as? String == "update")
        let listed = try await guardd.familyctlAsGuardian(["requests"])
        try await check(request, listed.standardOutput)
        let denied = try await guardd.familyctlAsGuardian(["deny", String(id), "--stdin"],
                                                         input: "\(guardd.guardian.password ?? "")\n")
        #expect(denied.status == 0, "\(denied.standardError)")
        #expect(await running.exitStatus() == 1)
    }

    /// The child swaps its own key into the desktop entry while its request
    /// waits: the guardian was shown the vendor's key, the approval trusts
    /// that one, and a version the child signs is no update without them.
    @Test func childsOwnUpdateKeyCarriesNoUpdate() async throws {
        try await withGuard { guardd in
            _ = try await guardd.declareUpdateKey()
            let vendor = try #require(try String(contentsOfFile: "\(guardd.appDirectory)/\(GuardFixture.appID).desktop",
                                                 encoding: .utf8).split(separator: "\n")
                .first { $0.hasPrefix("X-FamilyControls-UpdateKey=") }?.dropFirst("X-FamilyControls-UpdateKey=".count))
            let (ownFile, own) = try await guardd.makeUpdateKey("own")

            let asking = try guardd.startApp(executable: guardd.appExecutable)
            defer { asking.stop() }
            let id = try await asking.waitForPendingRequest()
            // The guardian is shown the key whose signed versions will go in without asking.
            let listed = try await guardd.familyctlAsGuardian(["requests"])
            #expect(listed.standardOutput.contains("signed by its update key \(vendor)"), "\(listed.standardOutput)")
            #expect(try await requests(guardd).first?["updateKey"] as? String == String(vendor))
            let details = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                            "SELECT detail FROM audit WHERE detail IS NOT NULL"])
            #expect(details.standardOutput.contains("its update key is \(vendor)"), "\(details.standardOutput)")
            // Then, before the guardian decides, the child declares its own key instead.
            try await guardd.shell(guardd.replacingUpdateKey(in: guardd.appDirectory, with: own)).requireSuccess()
            let decided = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            asking.endInput()
            #expect(await asking.exitStatus() == 0, "\(asking.standardError)")

            // A no-op "version" the child signs with its own key: a guardian's decision, shown as a change of key.
            try await guardd.stageUpdate(version: "2", signingKey: ownFile).requireSuccess()
            try await expectUpdateWaitsForGuardian(guardd) { request, text in
                #expect(request["formerUpdateKey"] as? String == String(vendor))
                #expect(request["updateKey"] as? String == own)
                #expect(text.contains("the update key changes from \(vendor) to \(own)"), "\(text)")
            }
            #expect(try String(contentsOfFile: "\(guardd.appDirectory)/VERSION", encoding: .utf8) == "1\n")
            #expect(try await guardd.storedStatus() == "approved")
        }
    }

    /// An unsigned update, identical but for the child's key and its
    /// version: the guardian is shown the change of key plainly; once they
    /// approve it, that key is what they saw, and it carries the next update.
    @Test func keyChangeIsShownInUpdateRequest() async throws {
        try await withGuard { guardd in
            _ = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            let (ownFile, own) = try await guardd.makeUpdateKey("own")
            try await guardd.stageUpdate(version: "1.0.1", signingKey: nil,
                                         edit: guardd.replacingUpdateKey(in: guardd.stagingDirectory, with: own))
                .requireSuccess()
            let running = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                      ["update", "--stdin"]))
            defer { running.stop() }
            let id = try await guardd.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests"])
            #expect(listed.standardOutput.contains("the update key changes from ed25519:"), "\(listed.standardOutput)")
            #expect(listed.standardOutput.contains(" to \(own)"), "\(listed.standardOutput)")
            #expect(try await requests(guardd).first?["updateKey"] as? String == own)
            let decided = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            #expect(decided.standardError.contains("the update key changes from ed25519:")
                        || decided.standardOutput.contains("the update key changes from ed25519:"),
                    "the guardian is shown the change before deciding: \(decided.standardOutput)\(decided.standardError)")
            #expect(await running.exitStatus() == 0, "\(running.standardError)")
            try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'").requireSuccess()

            // The key the guardian saw now signs the next version in.
            try await guardd.stageUpdate(version: "1.0.2", signingKey: ownFile).requireSuccess()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 0, "\(updated.standardError)")
            #expect(updated.standardOutput == "update: swapped in, signed\n")
            #expect(try String(contentsOfFile: "\(guardd.appDirectory)/VERSION", encoding: .utf8) == "1.0.2\n")
        }
    }

    /// After a signed update from 1 to 2, the old version, still validly
    /// signed, comes back: a version not newer than every one the approval
    /// has had is a guardian's decision, and says why.
    @Test func signedRollbackNeedsGuardian() async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.standardOutput == "update: swapped in, signed\n", "\(updated.standardError)")
            try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'").requireSuccess()

            for version in ["1", "2", "2.0"] {
                try await guardd.stageUpdate(version: version, signingKey: key).requireSuccess()
                try await expectUpdateWaitsForGuardian(guardd) { request, text in
                    #expect((request["note"] as? String)?.contains("is not newer than 2, the highest") == true,
                            "\(String(describing: request["note"]))")
                    #expect(text.contains("signed, but the staged version \(version) is not newer than 2"), "\(text)")
                }
                #expect(try String(contentsOfFile: "\(guardd.appDirectory)/VERSION", encoding: .utf8) == "2\n")
                try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'").requireSuccess()
            }
            // Newer again: in at once.
            try await guardd.stageUpdate(version: "2.1", signingKey: key).requireSuccess()
            let newer = try await guardd.app(["update", "--stdin"])
            #expect(newer.standardOutput == "update: swapped in, signed\n", "\(newer.standardError)")
        }
    }

    /// No key was shown to the guardian (the app declared none), but the
    /// administrator trusts the vendor's key for this app: a newer version it
    /// signs goes in without asking; the child's own key still does not.
    @Test func anUpdateKeyTheAdministratorConfiguredCarriesUpdates() async throws {
        try await withGuard { guardd in
            try await sh("echo 'X-FamilyControls-Version=1' >> '\(guardd.appDirectory)/\(GuardFixture.appID).desktop'")
                .requireSuccess()
            let (vendorFile, vendor) = try await guardd.makeUpdateKey("vendor")
            let (ownFile, own) = try await guardd.makeUpdateKey("own")
            try guardd.writeConfiguration(extra: "[Updates]\nTrustedKeys=\(GuardFixture.appID)=\(vendor)\n")
            guardd.stop()
            try await guardd.start()
            try await guardd.waitUntilReconciled()
            try await guardd.requestApproved().requireSuccess()

            let append = "echo 'X-FamilyControls-UpdateKey=%@' >> '\(guardd.stagingDirectory)/\(GuardFixture.appID).desktop'"
            try await guardd.stageUpdate(version: "2", signingKey: ownFile,
                                         edit: append.replacingOccurrences(of: "%@", with: own)).requireSuccess()
            try await expectUpdateWaitsForGuardian(guardd) { request, _ in
                #expect(request["updateKey"] as? String == own)
            }
            try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'").requireSuccess()

            try await guardd.stageUpdate(version: "2", signingKey: vendorFile,
                                         edit: append.replacingOccurrences(of: "%@", with: vendor)).requireSuccess()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 0, "\(updated.standardError)")
            #expect(updated.standardOutput == "update: swapped in, signed\n")
            #expect(try String(contentsOfFile: "\(guardd.appDirectory)/VERSION", encoding: .utf8) == "2\n")
        }
    }
}

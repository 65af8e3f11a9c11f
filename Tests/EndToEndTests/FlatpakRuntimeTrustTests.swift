import Foundation
import Testing
import TestSupport

/// The runtime is the sandbox's `/usr`: its shell and its libraries run as
/// the app. An approved app moved into the Guard's installation is itself
/// only on the runtime its approval records, deployed where the child
/// cannot write; a new runtime commit is followed without a guardian only
/// from a remote the site trusts. Real flatpak, polkitd, system helper,
/// move service and Guard, as in ``FlatpakMoveApprovalTests``.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"),
       .enabled(if: FlatpakSystemServices.isAvailable,
                "needs polkitd (/usr/lib/polkit-1/polkitd) and flatpak-system-helper (Debian's polkitd and flatpak; .ci/run installs them)"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"),
                "needs systemd-socket-activate (Debian's systemd)"))
struct FlatpakRuntimeTrustTests {
    let runtimeRef = FlatpakTestRepository.runtimeRef

    /// Publishes a runtime commit whose shell is the child's and deploys it
    /// in the Guard's installation as the child's `flatpak update` does
    /// (through the system helper). - Returns: the new commit.
    private func deployChildsRuntime(_ child: FlatpakChild, _ services: FlatpakSystemServices) async throws -> String {
        try await Task.sleep(for: .seconds(1.1))
        let commit = try await offload { try child.repository.publishRuntime(marker: "the-childs-shell") }
        let updated = try await child.flatpak(["update", "-y", "--noninteractive", runtimeRef])
        #expect(updated.status == 0, "\(updated.standardError)")
        #expect(services.guardRuntimeActive == commit, "\(updated.standardOutput)\(updated.standardError)")
        return commit
    }

    @Test func aRuntimeCommitFromARemoteTheSiteDoesNotTrustWaitsForAGuardianHoweverUnchangedTheAppIs() async throws {
        try await withFlatpakMoveService { guardd, child, services in
            let approvedRuntime = try child.repository.runtimeCommit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(services.guardRuntimeActive == approvedRuntime)
            let childs = try await deployChildsRuntime(child, services)

            // The app's own commit is the approved one, its runtime is not: an update request names the runtime.
            let (request, app) = try await guardd.pendingFlatpakRequest(child)
            #expect(request["purpose"] as? String == "update", "\(request)")
            let to = request["to"] as? String ?? ""
            #expect(to.contains("runtime \(FlatpakTestRepository.runtimeID)/"), "\(request)")
            #expect(to.contains(String(childs.prefix(16))), "\(request)")
            #expect(to.contains("not one this site trusts"), "\(request)")
            #expect((request["from"] as? String)?.contains(String(approvedRuntime.prefix(16))) == true, "\(request)")
            let denied = try await guardd.decideFlatpakRequest(request, app, approve: false)
            #expect(denied.standardOutput != "status: approved\n", "\(denied.standardOutput)\(denied.standardError)")
            #expect(guardd.log.contains("not the approved"), "\(guardd.log)")
            let status = try await child.runDemo(["status"], socket: guardd.socket)
            #expect(!status.standardOutput.contains("approved"), "denied: not approved on that runtime: \(status.standardOutput)")

            // Let in by the guardian: approved on the new runtime, and at once after.
            let (again, waiting) = try await guardd.pendingFlatpakRequest(child)
            let letIn = try await guardd.decideFlatpakRequest(again, waiting, approve: true)
            #expect(letIn.standardOutput == "status: approved\n", "\(letIn.standardError)\n\(guardd.log)")
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput == "status: approved\n", "\(asked.standardError)\n\(guardd.log)")
            let rows = try await guardd.auditRows()
            #expect(rows.contains("\(guardd.guardian.name) update \(child.user.name) \(FlatpakChild.appID) approved"), "\(rows)")
        }
    }

    /// An approval recorded before the Guard judged runtimes, whose runtime
    /// the child had meanwhile updated from a remote the site does not
    /// trust: that runtime is not taken as approved in passing (recorded as
    /// if a guardian had seen it), it is a guardian's decision.
    @Test func aRuntimeAnEarlierApprovalNeverJudgedIsAGuardiansDecisionUnlessTheSiteTrustsIt() async throws {
        try await withFlatpakMoveService { guardd, child, services in
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            let childs = try await deployChildsRuntime(child, services)
            // The approval as a Guard before runtimes were judged wrote it: no runtime.
            guardd.stop()
            try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                               "UPDATE authorizations SET flatpak_runtime = NULL, flatpak_runtime_commit = NULL, "
                                               + "flatpak_runtime_time = NULL"]).requireSuccess()
            try await guardd.start()

            let (request, app) = try await guardd.pendingFlatpakRequest(child)
            #expect(request["purpose"] as? String == "update", "\(request)")
            let to = request["to"] as? String ?? ""
            #expect(to.contains("runtime \(FlatpakTestRepository.runtimeID)/") && to.contains(String(childs.prefix(16))), "\(request)")
            #expect(to.contains("not one this site trusts"), "\(request)")
            #expect(!guardd.log.contains("recorded its runtime"), "\(guardd.log)")
            let rows = try await guardd.auditRows()
            #expect(!rows.contains { $0.hasPrefix("guard update ") }, "recorded without a guardian: \(rows)")
            let letIn = try await guardd.decideFlatpakRequest(request, app, approve: true)
            #expect(letIn.standardOutput == "status: approved\n", "\(letIn.standardError)\n\(guardd.log)")
            let pinned = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                            "SELECT flatpak_runtime_commit FROM authorizations"])
            #expect(pinned.standardOutput == childs + "\n", "the guardian's decision is recorded")
        }
    }

    @Test func aNewerRuntimeCommitOfTheRemoteTheSiteTrustsIsFollowedWithoutAGuardian() async throws {
        try await withFlatpakMoveService(extra: { child in
            "TrustedRemote=\(FlatpakChild.remote) file://\(child.repository.repository)"
        }) { guardd, child, services in
            let approvedRuntime = try child.repository.runtimeCommit()
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            let newer = try await deployChildsRuntime(child, services)
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput == "status: approved\n", "\(asked.standardError)\n\(guardd.log)")
            #expect(guardd.log.contains("runtime \(FlatpakTestRepository.runtimeID)/\(FlatpakTestRepository.architecture)/"
                                        + "\(FlatpakTestRepository.branch) from \(approvedRuntime) to \(newer)"), "\(guardd.log)")
            #expect(try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput == "{\"requests\":[]}\n",
                    "a newer runtime from the trusted remote asks no one")
        }
    }

    @Test func aPerUserCopyOfTheRuntimeTheChildInstallsAgainDoesNotRunTheMovedAppAsApproved() async throws {
        try await withFlatpakMoveService { guardd, child, services in
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            #expect(!FileManager.default.fileExists(atPath: "\(child.installation)/\(runtimeRef)"), "set aside by the move")

            // The child installs the same runtime ref for themself: Flatpak now runs the moved app on it.
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", FlatpakChild.remote, runtimeRef])
                .requireSuccess()
            let app = try await child.start()
            let info = try app.flatpakInfo()
            app.stop()
            #expect(info["Instance"]?["runtime-path"]?.hasPrefix(child.installation + "/") == true, "\(info)")

            // On it, the app is not the approved app: its files under /usr are the child's to change.
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(asked.standardOutput != "status: approved\n", "\(asked.standardOutput)")
            #expect(asked.standardError.contains("a per-user installation"), "\(asked.standardError)\n\(guardd.log)")

            // Removed again, the app runs on the Guard's runtime and is approved.
            try await child.flatpak(["uninstall", "--user", "-y", "--noninteractive", runtimeRef]).requireSuccess()
            let back = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(back.standardOutput == "status: approved\n", "\(back.standardError)\n\(guardd.log)")
        }
    }
    @Test func theMovedAppRunOnARuntimeTheChildInstalledWithFlatpakRunRuntimeIsNotTheApprovedApp() async throws {
        try await withFlatpakMoveService { guardd, child, _ in
            let approved = try await guardd.flatpakRequestApproved(child)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")

            // A runtime of the child's own (its shell says so), installed for themself from their remote.
            let id = "org.familycontrols.ChildsRuntime"
            try await offload { _ = try child.repository.publishRuntime(marker: "the-childs-runtime", id: id) }
            let ref = "\(id)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)"
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", FlatpakChild.remote, "runtime/\(ref)"])
                .requireSuccess()

            // The moved app run on it asks as an app the Guard does not know as approved.
            let asked = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket,
                                                runFlags: ["--runtime=\(ref)"])
            #expect(asked.standardOutput != "status: approved\n", "\(asked.standardOutput)\(asked.standardError)")
            #expect(guardd.log.contains("not the app's own runtime"), "\(asked.standardError)\n\(guardd.log)")
            let stored = try await guardd.storedStatus(user: child.user.name, appID: FlatpakChild.appID)
            #expect(stored == "approved", "the approval stays")

            // On the runtime its deployment names, the same app is approved.
            let back = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(back.standardOutput == "status: approved\n", "\(back.standardError)\n\(guardd.log)")
        }
    }
}

import Foundation
import Testing
import TestSupport

/// A child's request waits for a parent or guardian, who decides it from
/// their own session: real users, real PAM, the real Guard, familyctl run as
/// the guardian (not root) on a real pseudo-terminal.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct GuardianSessionTests {
    /// `familyctl requests --watch` run as `user`, its lines collected.
    private func watch(_ guardd: GuardFixture, as user: ThrowawayUser) throws -> (Process, LineCollector) {
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        watcher.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                             productPath("familyctl"), "requests", "--watch", "--socket", guardd.socket]
        let output = Pipe()
        watcher.standardOutput = output
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        return (watcher, LineCollector(output.fileHandleForReading))
    }

    @Test func aWatchingGuardianSeesTheRequestAtOnceAndApprovesItOnTheirOwnTerminal() async throws {
        try await withGuard { guardd in
            let (watcher, lines) = try watch(guardd, as: guardd.guardian)
            defer { kill(watcher) }
            #expect(await eventually { lines.all.contains("No requests are waiting for you.") }, "\(lines.all)")

            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let asked = ContinuousClock.now
            #expect(await eventually { lines.all.contains { $0.hasPrefix("new request \(id): ") } }, "\(lines.all)")
            #expect(ContinuousClock.now - asked < .seconds(1), "the watching guardian saw it late")
            let shown = try #require(lines.all.first { $0.hasPrefix("new request \(id): ") })
            #expect(shown.contains("“FamilyControls Demo” (\(GuardFixture.appID)) asks to provide parental controls for \(guardd.child.name)"))

            let password = guardd.guardian.password ?? ""
            let terminal = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
                 productPath("familyctl"), "approve", String(id), "--socket", guardd.socket],
                steps: [("Password:", password)])
            #expect(terminal.status == 0, "\(terminal)")
            #expect(terminal.echoAtPrompts == [false], "the password was echoed")
            #expect(terminal.showed("request \(id): “FamilyControls Demo” is approved for \(guardd.child.name); its folder is locked, "
                                    + "so \(guardd.child.name) cannot remove or change it"), "\(terminal.output)")

            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(app.standardOutput == "status: approved\n")
            #expect(try TreeSnapshot.take(guardd.appDirectory).unlockedItems().isEmpty)
            #expect(await eventually { lines.all.contains("request \(id) ended") })
            let audit = try await guardd.auditRows()
            #expect(audit.contains("\(guardd.guardian.name) approve \(guardd.child.name) \(GuardFixture.appID) approved"))
            for (what, text) in [("app", app.standardError + app.standardOutput), ("log", guardd.log),
                                 ("watcher", lines.all.joined(separator: "\n"))] {
                #expect(!text.contains(password), "the guardian's password reached the \(what)")
            }
        }
    }

    @Test func aGuardiansDenialReachesTheAppAsDenied() async throws {
        try await withGuard { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let denied = try await guardd.familyctlAsGuardian(["deny", String(id), "--stdin"],
                                                              input: "\(guardd.guardian.password ?? "")\n")
            #expect(denied.status == 0, "\(denied.standardError)")
            #expect(denied.standardOutput.contains("request \(id): “FamilyControls Demo” is not allowed for \(guardd.child.name)"),
                    "\(denied.standardOutput)")
            #expect(await app.exitStatus() == 1)
            #expect(app.standardError.contains("error 5 authorizationCanceled"))
            #expect(app.standardOutput == "status: denied\n")
            #expect(try await guardd.storedStatus() == "denied")
            #expect(try TreeSnapshot.take(guardd.appDirectory).items.allSatisfy { !$0.isImmutable })
        }
    }

    @Test func aRequestNobodyDecidesExpires() async throws {
        try await withGuard(extraConfiguration: "PendingTimeout=10s") { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            #expect(await app.exitStatus() == 1)
            #expect(app.standardError.contains("error 5 authorizationCanceled"))
            #expect(app.standardError.contains("no parent or guardian decided within 10 seconds"), "\(app.standardError)")
            #expect(try await guardd.auditRows().contains { $0.hasSuffix(" expired") })
            let late = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                            input: "\(guardd.guardian.password ?? "")\n")
            #expect(late.status == 1, "an expired request cannot be approved")
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test func nobodyButTheChildsGuardiansSeesOrDecidesItsRequests() async throws {
        try await withGuard { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            for (who, input) in [(guardd.adult, guardd.adult.password ?? ""), (guardd.child, guardd.child.password ?? "")] {
                let listed = try await guardd.familyctlAsGuardian(["requests"], as: who)
                #expect(listed.standardOutput == "No requests are waiting for you.\n", "\(who.name) saw \(listed.standardOutput)")
                let decided = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], as: who, input: input + "\n")
                #expect(decided.status == 1)
                #expect(decided.standardError == "familyctl: no request \(id) is waiting for \(who.name) to decide\n")
            }
            #expect(app.process.isRunning, "the request still waits")
            let root = try await guardd.familyctl(["requests", "--json"])
            #expect(root.standardOutput.contains("\"id\":\(id)"), "root sees every request: \(root.standardOutput)")
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0)
        }
    }

    @Test func aWrongPasswordDecidesNothingAndTheRequestStillWaits() async throws {
        try await withGuard(extraConfiguration: "FailureDelay=0") { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let wrong = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "wrong-1\nwrong-2\nwrong-3\n")
            #expect(wrong.status == 1)
            #expect(wrong.standardError.contains("Sorry, try again."))
            #expect(app.process.isRunning)
            #expect(try await guardd.storedStatus() == "notDetermined")
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0)
        }
    }

    @Test func anAppsRevokeWaitsForAGuardianToo() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let revoke = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                     ["revoke", "--stdin"]))
            defer { revoke.stop() }
            let id = try await revoke.waitForPendingRequest()
            let listed = try await guardd.familyctlAsGuardian(["requests"])
            #expect(listed.standardOutput.contains("be revoked"), "\(listed.standardOutput)")
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await revoke.exitStatus() == 0)
            #expect(revoke.standardOutput == "revoke completed\n")
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try TreeSnapshot.take(guardd.appDirectory).items.allSatisfy { !$0.isImmutable })
        }
    }

    @Test func aChildWhoGivesUpCancelsTheRequest() async throws {
        try await withGuard { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            let id = try await app.waitForPendingRequest()
            kill(app.process.processIdentifier, SIGKILL)
            app.process.waitUntilExit()
            let gone = try await eventually {
                try await guardd.familyctl(["requests", "--json"]).standardOutput.contains("\"requests\":[]")
            }
            #expect(gone, "the request outlived the app that made it")
            // The audit row is written as the request ends, which may be just after the list no longer shows it.
            let canceled = try await eventually {
                try await guardd.auditRows().contains { $0.hasSuffix(" canceled") }
            }
            let rows = try await guardd.auditRows()
            #expect(canceled, "\(rows)")
            let late = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                            input: "\(guardd.guardian.password ?? "")\n")
            #expect(late.status == 1)
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }
}

import Foundation
import SystemKit
import Testing
import TestSupport

/// The authentication sheet as a shared resource: a child guessing a
/// guardian's password gets no more guesses, and no faster, from many apps
/// and requests than from one; an administrator never waits behind a sheet.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products (familycontrolsd, familyctl, familycontrols-demo)"))
struct GuardSheetTests {
    static let second = "org.example.Second"

    @Test func afterTooManyFailuresNoAppMayAskUntilTheDelayHasPassed() async throws {
        // 20 s: long enough that the next app surely asks within it on a machine
        // running the whole suite on two cores.
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=20s\nInSessionApproval=yes") { guardd in
            try guardd.installDemo(for: guardd.child, appID: Self.second)
            let second = guardd.secondExecutable
            let name = guardd.guardian.name

            let failed = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n\(name)\nwrong-1\n")
            #expect(failed.status == 1)
            #expect(failed.standardError.contains("error 5 authorizationCanceled"))
            let failedAt = ContinuousClock.now

            // Another app, at once: refused before any prompt, with the wait stated.
            let refused = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput,
                                               executable: second)
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("error 5 authorizationCanceled"))
            #expect(refused.standardError.contains("Too many failed attempts. Try again in "), "\(refused.standardError)")
            #expect(!refused.standardError.contains("Allow “"), "no alert while the child must wait")
            #expect(try await guardd.storedStatus(appID: Self.second) == "notDetermined")
            #expect(guardd.log.contains("refused: 1 failed authentications in a row"), "\(guardd.log)")

            // Once the delay has passed, the guardian's password works again and clears the count.
            try await Task.sleep(until: failedAt + .milliseconds(20_500))
            let approved = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput,
                                                executable: second)
            #expect(approved.status == 0, "\(approved.standardError)")
            #expect(try await guardd.storedStatus(appID: Self.second) == "approved")

            // Cleared: one new failure waits the first delay (20 s), not the doubled one (40 s).
            _ = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n\(name)\nwrong-2\n")
            let again = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(again.status == 1)
            let wait = again.standardError.firstMatch(of: /Try again in (\d+) seconds?\./).flatMap { Int($0.1) }
            #expect(wait.map { (1...20).contains($0) } == true, "\(again.standardError)")

            let refusals = try await guardd.auditRows().filter { $0.hasSuffix(" refused") }
            #expect(refusals.count == 2, "\(refusals)")
            #expect(!guardd.log.contains(guardd.guardian.password ?? "-"))
        }
    }

    @Test func dontAllowNeverUndoesAnApprovalMadeWhileTheSheetWasOpen() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            #expect(await app.waitForError(containing: "Allow “"), "\(app.standardError)")
            let set = try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"])
            #expect(set.status == 0, "\(set.standardError)")

            app.write("don't allow\n")
            let status = await app.exitStatus()
            #expect(status == 0, "the request ends with the approval: \(app.standardError)")
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
            #expect(try await guardd.auditRows().contains { $0.hasSuffix(" deny \(guardd.child.name) \(GuardFixture.appID) no effect") })
        }
    }

    @Test func oneChildsSheetsOpenOneAtATimeWhicheverAppAsks() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try guardd.installDemo(for: guardd.child, appID: Self.second)

            // The first app's alert is up and nobody answers it yet.
            let first = try guardd.startApp(executable: guardd.appExecutable)
            defer { first.stop() }
            #expect(await first.waitForError(containing: "Allow “"), "\(first.standardError)")

            // The second app asks meanwhile: its sheet waits for the first to close.
            let second = try guardd.startApp(executable: guardd.secondExecutable)
            defer { second.stop() }
            second.write(guardd.approvingInput)
            let waiting = "request: \(Self.second) for \(guardd.child.name) waits for their open sheet to end"
            #expect(await eventually { guardd.log.contains(waiting) }, "\(guardd.log)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(second.process.isRunning)
            #expect(!second.standardError.contains("Allow “"), "\(second.standardError)")

            first.endInput()  // nobody answered: the first request is canceled
            let firstStatus = await first.exitStatus()
            #expect(firstStatus == 1)
            let secondStatus = await second.exitStatus()
            #expect(secondStatus == 0, "\(second.standardError)\n\(guardd.log)")
            #expect(await second.waitForError(containing: "Allow “"))
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try await guardd.storedStatus(appID: Self.second) == "approved")
        }
    }

    @Test func anAdministratorNeverWaitsForAPersonAtASheet() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            #expect(await app.waitForError(containing: "Allow “"), "\(app.standardError)")

            // The sheet stays open (up to the fixture's PromptTimeout) while root decides.
            let set = try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "denied"])
            #expect(set.status == 0, "\(set.standardError)")
            #expect(app.process.isRunning, "the sheet was still open when the administrator's change was saved")
            #expect(try await guardd.storedStatus() == "denied")

            // The guardian then approves at the sheet: the later decision stands.
            app.write(guardd.approvingInput)
            let status = await app.exitStatus()
            #expect(status == 0, "\(app.standardError)")
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
        }
    }
}

extension GuardFixture {
    var secondExecutable: String { "\(appsRoot)/\(child.name)/\(GuardSheetTests.second)/familycontrols-demo" }
}

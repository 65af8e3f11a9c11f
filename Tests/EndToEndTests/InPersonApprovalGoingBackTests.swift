import Foundation
import Testing
import TestSupport

/// After "a parent or guardian is here" at the alert, the person can go back
/// to the alert's choices by typing nothing at the name prompt or at the
/// code prompt: the real Guard, the child's real app (the demo, run as the
/// child), the guardian's real one-time code through pam_oath. Going back is
/// no failed attempt, and gives no attempt back either.
@Suite(.serialized, .enabled(if: canRunGuard && canUseOneTimeCodes,
                             "needs root, the built products, libpam-oath and oathtool (Config/install.sh installs them)"))
struct InPersonApprovalGoingBackTests {
    private let codes = GuardianCodeTests()

    @Test func goingBackFromTheCodeAndTheNamePromptThenAskingAParentElsewhereWorks() async throws {
        // One attempt only, and slowed after it: had going back counted, the request would end.
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=30s") { guardd in
            _ = try await codes.enroll(guardd)
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            #expect(await app.waitForError(containing: "[continue/here/don't allow]"), "\(app.standardError)")
            app.write("here\n")
            #expect(await app.waitForError(containing: "Parent or guardian's user name, or press Enter to go back: "),
                    "the name prompt says how to go back: \(app.standardError)")
            app.write("\(guardd.guardian.name)\n")
            #expect(await app.waitForError(containing:
                "\(guardd.guardian.name)'s one-time code (the 6 digits their authenticator app shows now), or press Enter to go back: "),
                "the code prompt says how to go back: \(app.standardError)")
            // Nothing typed at the code prompt: back to the alert, PAM never had an answer.
            app.write("\n")
            #expect(await eventually { app.standardError.components(separatedBy: "[continue/here/don't allow]").count == 3 },
                    "the alert was asked again: \(app.standardError)")
            app.write("here\n")
            // The third prompt offering a way back: the name, the code, and now the name again.
            #expect(await eventually { app.standardError.components(separatedBy: "or press Enter to go back").count == 4 },
                    "the name prompt was asked again: \(app.standardError)")
            // Nothing typed at the name prompt: back again.
            app.write("\n")
            #expect(await eventually { app.standardError.components(separatedBy: "[continue/here/don't allow]").count == 4 },
                    "the alert was asked again: \(app.standardError)")
            #expect(!app.standardError.contains("Sorry"), "going back is no failed attempt: \(app.standardError)")

            // Then "ask a parent elsewhere": the guardian approves from their own session.
            app.write("continue\n")
            #expect(await app.waitForError(containing: "familyctl approve "), "\(app.standardError)")
            let id = try #require(app.standardError.firstMatch(of: /familyctl approve (\d+)/).flatMap { Int64($0.1) })
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(try await guardd.storedStatus() == "approved")
            let rows = try await guardd.auditRows()
            #expect(!rows.contains { $0.hasSuffix(" authentication failed") }, "\(rows)")
        }
    }

    /// The attack: a child who has used all but the last attempt goes back
    /// and chooses "here" again, hoping to start over with a fresh count.
    @Test func goingBackDoesNotResetTheFailureCount() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=2\nFailureDelay=0") { guardd in
            let enrolment = try await codes.enroll(guardd)
            let right = codes.code(enrolment)
            let wrong = String(format: "%06d", ((Int(right) ?? 0) + 1) % 1_000_000)
            let name = guardd.guardian.name
            // A wrong code, back, "here" and a wrong code again: the second of two attempts.
            // With a fresh count after going back, the name and the right code that follow would approve.
            let result = try await guardd.app(["request", "--member", "child", "--stdin"],
                                              input: "here\n\(name)\n\(wrong)\n\nhere\n\(name)\n\(wrong)\n\(name)\n\(right)\n")
            #expect(result.status == 1, "\(result.standardError)")
            #expect(result.standardError.contains("error 5 authorizationCanceled"), "\(result.standardError)")
            #expect(result.standardError.components(separatedBy: "[continue/here/don't allow]").count == 3,
                    "the person went back to the alert once: \(result.standardError)")
            #expect(try await guardd.storedStatus() == "notDetermined")
            let rows = try await guardd.auditRows()
            #expect(rows.filter { $0.hasSuffix(" authentication failed") }.count == 2, "\(rows)")
            #expect(rows.contains { $0.hasSuffix(" too many failures") }, "\(rows)")
        }
    }
}

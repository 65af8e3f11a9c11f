import Foundation
import SystemKit
import Testing
import TestSupport
import Varlink

/// Each state transition against a real Guard process, real PAM, real users,
/// and the demo app run as the child.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products (familycontrolsd, familyctl, familycontrols-demo)"))
struct GuardFlowTests {
    @Test func childRequestApprovedByGuardianThenRevoked() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let first = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(first.status == 0, "\(first.standardError)\n\(guardd.log)")
            #expect(first.standardOutput == "status: approved\n")
            #expect(first.standardError.contains("Allow “FamilyControls Demo” to provide parental controls for \(guardd.child.name)?"))
            #expect(!first.standardError.contains(guardd.guardian.password ?? "-"))
            #expect(try await guardd.storedStatus() == "approved")
            let row = try #require(try await guardd.authorization())
            #expect(row["approvedBy"]?.stringValue == guardd.guardian.name)
            #expect(row["member"]?.stringValue == "child")

            // Already approved: success at once, with no prompt at all.
            let second = try await guardd.app(["request", "--member", "child", "--stdin"], input: "")
            #expect(second.status == 0)
            #expect(second.standardOutput == "status: approved\n")
            #expect(second.standardError.isEmpty)

            // Lifting a child's approval takes a guardian too.
            let revoked = try await guardd.app(["revoke", "--stdin"], input: guardd.approvingInput)
            #expect(revoked.status == 0)
            #expect(revoked.standardOutput == "revoke completed\n")
            #expect(revoked.standardError.contains("to stop providing parental controls for \(guardd.child.name)?"))
            #expect(try await guardd.storedStatus() == "notDetermined")

            let app = GuardFixture.appID
            let kid = guardd.child.name
            let audit = try await guardd.auditRows()
            #expect(audit == [
                "\(kid) request \(kid) \(app) started",
                "\(guardd.guardian.name) approve \(kid) \(app) approved",
                "guard lock \(kid) \(app) locked",
                "\(guardd.guardian.name) revoke \(kid) \(app) revoked",
                "\(guardd.guardian.name) unlock \(kid) \(app) unlocked",
            ])
            #expect(!guardd.log.contains(guardd.guardian.password ?? "-"))
        }
    }

    @Test func theAppAloneCannotLiftAChildsApproval() async throws {
        // No wait after the wrong passwords: each attempt below must reach its own refusal.
        try await withGuard(extraConfiguration: "FailureDelay=0\nInSessionApproval=yes") { guardd in
            try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput).requireSuccess()
            let name = guardd.guardian.name
            let attempts: [String] = [
                "",                                                       // no one answers
                "don't allow\n",                                          // refused at the alert
                "y\n\(name)\nwrong-1\n\(name)\nwrong-2\n\(name)\nwrong-3\n",   // wrong password three times
                "y\n\(guardd.child.name)\n\(guardd.child.password ?? "")\n",    // the child is no guardian
            ]
            for input in attempts {
                let result = try await guardd.app(["revoke", "--stdin"], input: input)
                #expect(result.status == 1)
                #expect(result.standardError.contains("error 5 authorizationCanceled"))
                #expect(try await guardd.storedStatus() == "approved")
                #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
            }
        }
    }

    @Test func dontAllowDeniesWithErrorFive() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: "don't allow\n")
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 5 authorizationCanceled"))
            #expect(result.standardOutput == "status: denied\n")
            #expect(try await guardd.storedStatus() == "denied")

            // Revoke has no effect on a denied app, and still completes.
            let revoked = try await guardd.app(["revoke"])
            #expect(revoked.status == 0)
            #expect(try await guardd.storedStatus() == "denied")
        }
    }

    @Test func wrongPasswordThreeTimesCancelsAndChangesNothing() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let name = guardd.guardian.name
            let input = "y\n\(name)\nwrong-1\n\(name)\nwrong-2\n\(name)\nwrong-3\n"
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: input)
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 5 authorizationCanceled"))
            #expect(result.standardError.components(separatedBy: "Sorry, try again.").count == 3)
            #expect(result.standardOutput == "status: notDetermined\n")
            #expect(try await guardd.storedStatus() == "notDetermined")
            let failures = try await guardd.auditRows().filter { $0.contains("authentication failed") }
            #expect(failures.count == 3)
            // The helper's failures are told by their code's name: libpam's code never runs in the Guard.
            #expect(guardd.log.contains("[PAM_AUTH_ERR]"), "\(guardd.log)")
            let maps = try await run("/bin/cat", ["/proc/\(try guardd.servingPID())/maps"]).requireSuccess().standardOutput
            #expect(maps.contains("libc.so.6") && !maps.contains("libpam"), "\(maps)")
        }
    }

    @Test func someoneWhoIsNotAGuardianCannotApprove() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let adult = guardd.adult
            let input = "y\n\(adult.name)\n\(adult.password ?? "")\n" + "\(adult.name)\n" + "\(adult.name)\n"
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: input)
            #expect(result.status == 1)
            #expect(result.standardError.contains("is not a parent or guardian of \(guardd.child.name)"))
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test func hangUpMidConversationCancels() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            // End of input at the password prompt: the app gives up and hangs up.
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n\(guardd.guardian.name)\n")
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 5 authorizationCanceled"))
            #expect(try await guardd.storedStatus() == "notDetermined")
            #expect(try await guardd.auditRows().contains { $0.contains(" cancel ") })
        }
    }

    @Test func individualAuthorizesThemselfWithoutALock() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let adult = guardd.adult
            let result = try await guardd.app(["request", "--member", "individual", "--stdin"], as: adult,
                                        input: "yes\n\(adult.password ?? "")\n")
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardOutput == "status: approved\n")
            let row = try #require(try await guardd.authorization(user: adult.name))
            #expect(row["member"]?.stringValue == "individual")
            #expect(row["lock"]?.stringValue == "unlocked")
            #expect(row["approvedBy"]?.stringValue == adult.name)
        }
    }

    @Test func individualWithNoPasswordHasNoMethod() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await run("/usr/bin/passwd", ["-d", guardd.adult.name]).requireSuccess()
            try await run("/usr/sbin/usermod", ["-p", "!", guardd.adult.name]).requireSuccess()
            let result = try await guardd.app(["request", "--member", "individual", "--stdin"], as: guardd.adult,
                                        input: "yes\nanything\n")
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 7 authenticationMethodUnavailable"))
        }
    }

    @Test func accountTypesAreChecked() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let adultAsChild = try await guardd.app(["request", "--member", "child", "--stdin"], as: guardd.adult, input: "")
            #expect(adultAsChild.status == 1)
            #expect(adultAsChild.standardError.contains("error 2 invalidAccountType"))
            #expect(adultAsChild.standardError.contains("is not a child in the family configuration"))

            let childAsIndividual = try await guardd.app(["request", "--member", "individual", "--stdin"], input: "")
            #expect(childAsIndividual.status == 1)
            #expect(childAsIndividual.standardError.contains("error 2 invalidAccountType"))
        }
    }

    @Test func approvalsSurviveKillAndRestart() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput).requireSuccess()
            guardd.stop(signal: SIGKILL)
            try await guardd.start()
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
            let again = try await guardd.app(["request", "--member", "child", "--stdin"], input: "")
            #expect(again.status == 0)
            #expect(guardd.log.contains("reconcile: every lock matches the store"))
        }
    }

    @Test func concurrentRequestsForOneAppNeverPromptTwice() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            // Two copies of the app ask at once; the second waits, then finds the approval.
            async let first = Task.detached { try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput) }.value
            async let second = Task.detached { try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput) }.value
            let results = try await [first, second]
            #expect(results.allSatisfy { $0.status == 0 })
            let alerts = results.filter { $0.standardError.contains("Allow “FamilyControls Demo”") }.count
            #expect(alerts == 1)
            #expect(try await guardd.auditRows().filter { $0.contains(" approve ") }.count == 1)
        }
    }
}

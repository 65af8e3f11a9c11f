import Foundation
import Testing
import TestSupport

/// The prompts on a real terminal: echo off for passwords, and the terminal
/// restored however the program ends, Ctrl-C included.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct TerminalPromptTests {
    @Test func familyctlPromptsWithEchoOffOnTheTerminal() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let password = try #require(user.password)
                let outcome = try await TerminalSession.run(
                    [productPath("familyctl"), "authenticate", user.name, "--member", "child", "--pam-dir", pamDir],
                    steps: [("Password:", password)])
                #expect(outcome.status == 0)
                #expect(outcome.echoAtPrompts == [false])
                #expect(outcome.echoAfter)
                let echoedPassword = outcome.showed(password)
                #expect(!echoedPassword, "the password was echoed")
                #expect(outcome.showed("authenticated on the familycontrols-guardian service"))
            }
        }
    }

    @Test func ctrlCAtThePasswordPromptRestoresEcho() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let outcome = try await TerminalSession.run(
                    [productPath("familyctl"), "authenticate", user.name, "--member", "individual", "--pam-dir", pamDir],
                    steps: [("Password:", "^C")])
                #expect(outcome.status == -SIGINT)
                #expect(outcome.echoAtPrompts == [false])
                #expect(outcome.echoAfter, "echo left off after Ctrl-C")
            }
        }
    }

    @Test func theAppsAuthenticationSheetOnTheTerminal() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let password = try #require(guardd.guardian.password)
            let outcome = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                 guardd.appExecutable, "request", "--member", "child"],
                steps: [("[continue/don't allow]:", "continue"), ("user name:", guardd.guardian.name), ("Password:", password)],
                environment: ["FAMILYCONTROLS_SOCKET": guardd.socket])
            #expect(outcome.status == 0)
            #expect(outcome.echoAtPrompts == [true, true, false])
            #expect(outcome.echoAfter)
            let echoedPassword = outcome.showed(password)
                #expect(!echoedPassword, "the password was echoed")
            #expect(outcome.showed("status: approved"))
        }
    }

    @Test func ctrlCInTheAppsSheetRestoresEchoAndChangesNothing() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let outcome = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                 guardd.appExecutable, "request", "--member", "child"],
                steps: [("[continue/don't allow]:", "y"), ("user name:", guardd.guardian.name), ("Password:", "^C")],
                environment: ["FAMILYCONTROLS_SOCKET": guardd.socket])
            #expect(outcome.status == -SIGINT)
            #expect(outcome.echoAfter, "echo left off after Ctrl-C")
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    /// The in-person flow at the child's real terminal: Enter alone at the
    /// name prompt, and at the code prompt (echo off), goes back to the
    /// alert's choices each time; the child then refuses.
    @Test(.enabled(if: canUseOneTimeCodes, "needs libpam-oath and oathtool (Config/install.sh installs them)"))
    func enterAloneAtTheGuardiansPromptsGoesBackToTheAlert() async throws {
        try await withGuard { guardd in
            _ = try await GuardianCodeTests().enroll(guardd)
            let alert = "[continue/here/don't allow]:"
            let outcome = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                 guardd.appExecutable, "request", "--member", "child"],
                steps: [(alert, "here"), ("user name, or press Enter to go back:", ""),
                        (alert, "here"), ("user name, or press Enter to go back:", guardd.guardian.name),
                        ("shows now), or press Enter to go back:", ""), (alert, "don't allow")],
                environment: ["FAMILYCONTROLS_SOCKET": guardd.socket])
            #expect(outcome.echoAtPrompts == [true, true, true, true, false, true], "\(outcome)")
            #expect(outcome.echoAfter)
            #expect(outcome.status == 1)
            #expect(!outcome.showed("Sorry"), "going back is no failed attempt")
            #expect(try await guardd.storedStatus() == "denied")
        }
    }
}

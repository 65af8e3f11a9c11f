import Foundation
import Testing
import TestSupport

/// What a parent reads at a real terminal (tmux, on a socket of its own),
/// captured as plain text: `familyctl approve ID` with the password typed
/// at the real PAM prompt, `familyctl status`, and the child's app asking,
/// at the child's terminal, for the guardian's one-time code. Each screen
/// must say what happened in a parent's words: the app's name, the child's
/// name, local time, what to do next; never the code's words.
///
/// With `FAMILYCONTROLS_SCREENSHOT=1` the three screens are written to
/// docs/images/terminal-approve.txt, terminal-status.txt and
/// terminal-code-prompt.txt.
@Suite(.serialized, .enabled(if: canRunGuard && canUseOneTimeCodes && TerminalScreen.canCapture,
                             "needs root, the built products, tmux, libpam-oath and oathtool (Config/install.sh installs them)"))
struct TerminalCaptureTests {
    /// Words a parent should never have to read.
    static let codeWords = ["lock: locked", "session pam-", "exit status", "One-time password (OATH)", "the Guard",
                            "error ", "Error", "authorizationCanceled"]

    /// `command` (shown after a `$ ` as if typed) run by `user` at a shell-like screen that waits afterwards.
    private func shell(_ user: ThrowawayUser, shown: String, _ command: [String]) -> [String] {
        let quoted = command.map { "'\($0)'" }.joined(separator: " ")
        return ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/bin/sh", "-c",
                "printf '%s\\n' '$ \(shown)'; \(quoted); printf '$ '; exec sleep 600"]
    }

    private func environment(_ guardd: GuardFixture) -> [String: String] {
        ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm-256color", "FAMILYCONTROLS_SOCKET": guardd.socket]
    }

    /// The date and minute `date` in the machine's time zone (the Guard's and
    /// familyctl's), as they write local times ("2026-12-05 13:04").
    private func localMinute(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    /// Whether `screen` shows a local time between `since` (less a minute) and now.
    private func shows(_ screen: String, localTimeSince since: Date) -> Bool {
        stride(from: since.addingTimeInterval(-60).timeIntervalSince1970, through: Date().timeIntervalSince1970 + 60, by: 60)
            .contains { screen.contains(localMinute(Date(timeIntervalSince1970: $0))) }
    }

    /// Whether `screen` shows `text`: a plain value, so that a failing
    /// expectation never prints the screen (where a secret might be).
    private func shows(_ screen: String, _ text: String) -> Bool { screen.contains(text) }

    /// What every capture must (not) show; each expectation is about a
    /// plain value, never the screen itself.
    /// - Returns: whether the screen shows none of `secrets`.
    @discardableResult
    private func checkWords(_ screen: String, _ what: String, secrets: [String]) -> Bool {
        for word in Self.codeWords {
            let said = shows(screen, word)
            #expect(!said, "the \(what) screen says \"\(word)\"")
        }
        let utc = screen.firstMatch(of: /\d\d:\d\d(:\d\d)?(\.\d+)?Z/) != nil
        #expect(!utc, "the \(what) screen shows a UTC time")
        let iso = screen.firstMatch(of: /\d{4}-\d\d-\d\dT\d\d/) != nil
        #expect(!iso, "the \(what) screen shows an ISO 8601 time")
        var clean = true
        for (index, secret) in secrets.enumerated() where shows(screen, secret) {
            clean = false
            Issue.record("the \(what) screen shows secret \(index + 1)")
        }
        return clean
    }

    /// Writes `screen` to docs/images/`name` with `FAMILYCONTROLS_SCREENSHOT` set, unless it showed a secret.
    private func save(_ screen: String, as name: String, clean: Bool) throws {
        guard clean, ProcessInfo.processInfo.environment["FAMILYCONTROLS_SCREENSHOT"] != nil else { return }
        let folder = "\(packageRoot)/docs/images"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try (screen + "\n").write(toFile: "\(folder)/\(name)", atomically: true, encoding: .utf8)
    }

    @Test func approveStatusAndTheCodePromptSayWhatHappenedInAParentsWords() async throws {
        try await withGuard(extraConfiguration: "FailureDelay=0") { guardd in
            let password = try #require(guardd.guardian.password)
            let child = guardd.child.name, guardian = guardd.guardian.name
            let familyctl = productPath("familyctl")

            // Installed first: installing chowns the child's whole app folder, which the approval locks.
            let second = try guardd.installDemo(for: guardd.child, appID: "org.example.Second")

            // The child's app asks; the parent approves from their own terminal.
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let asked = Date()
            let id = try await app.waitForPendingRequest()
            let approve = try await TerminalScreen.capture(
                shell(guardd.guardian, shown: "familyctl approve \(id)", [familyctl, "approve", String(id)]),
                steps: [("Password:", password)], done: "familyctl: request \(id)", environment: environment(guardd))
            #expect(approve.finished, "\(approve)")
            #expect(await app.exitStatus() == 0)
            let shownName = approve.screen.firstMatch(of: /“([^”]+)”/).map { String($0.1) }
            let name = try #require(shownName, "no app name shown")
            let result = shows(approve.screen, "“\(name)” is approved for \(child)")
            #expect(result, "the result names the app and the child")
            let asksPassword = shows(approve.screen, "Password:")
            #expect(asksPassword)
            let askedAt = shows(approve.screen, localTimeSince: asked)
            #expect(askedAt, "the request says when it was asked, in local time")
            let approveClean = checkWords(approve.screen, "approve", secrets: [password])

            // The child's second app, at the child's terminal: the guardian is here, with their code.
            let enrolment = try await GuardianCodeTests().enroll(guardd)
            let code = GuardianCodeTests().code(enrolment)
            let prompt = try await TerminalScreen.capture(
                shell(guardd.child, shown: "familycontrols-demo request --member child",
                      ["\(second)/familycontrols-demo", "request", "--member", "child"]),
                steps: [("[continue/here/don't allow]:", "here"), ("user name, or press Enter to go back:", guardian),
                        ("shows now), or press Enter to go back:", code)],
                done: "status: approved", environment: environment(guardd))
            #expect(prompt.finished, "\(prompt)")
            let namesChild = shows(prompt.screen, "for \(child)?")
            #expect(namesChild, "the alert names the child")
            let codeInWords = shows(prompt.screen, "\(guardian)'s one-time code (the 6 digits their authenticator app shows now)")
            #expect(codeInWords, "the code prompt names the guardian and says where the code is")
            let saysBack = shows(prompt.screen, "or press Enter to go back")
            #expect(saysBack, "the prompts say how to go back")
            let promptClean = checkWords(prompt.screen, "code prompt", secrets: [password, code, enrolment.base32])

            // What the parent's children have, in local time.
            let status = try await TerminalScreen.capture(
                shell(guardd.guardian, shown: "familyctl status", [familyctl, "status"]),
                steps: [], done: "\n$", environment: environment(guardd))
            #expect(status.finished, "\(status)")
            let statusNamesChild = shows(status.screen, child), statusNamesApp = shows(status.screen, name)
            #expect(statusNamesChild, "status names the child")
            #expect(statusNamesApp, "status names the app")
            let updatedAt = shows(status.screen, localTimeSince: asked)
            #expect(updatedAt, "status shows when it was approved, in local time")
            let statusClean = checkWords(status.screen, "status", secrets: [password, code])

            try save(approve.screen, as: "terminal-approve.txt", clean: approveClean)
            try save(status.screen, as: "terminal-status.txt", clean: statusClean)
            try save(prompt.screen, as: "terminal-code-prompt.txt", clean: promptClean)
        }
    }
}

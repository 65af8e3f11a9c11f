import Foundation
import Testing
import TestSupport

/// A parent or guardian at the child's screen: `familyctl code enroll` as the
/// guardian, then the child's app (the demo, run as the child) offers "a
/// parent or guardian is here" and takes the guardian's name and current
/// one-time code, checked by the shipped familycontrols-guardian-code
/// service (pam_oath) in the real Guard.
@Suite(.serialized, .enabled(if: canRunGuard && canUseOneTimeCodes,
                             "needs root, the built products, libpam-oath and oathtool (Config/install.sh installs them)"))
struct GuardianCodeTests {
    /// What `familyctl code enroll` showed: the secret's base32 and its bytes.
    struct Enrolment {
        var base32: String
        var secret: [UInt8]
        var output: String
    }

    /// Enrols `user`'s code (default: the guardian) through familyctl, their
    /// password on standard input.
    func enroll(_ guardd: GuardFixture, as user: ThrowawayUser? = nil) async throws -> Enrolment {
        let who = user ?? guardd.guardian
        let result = try await guardd.familyctlAsGuardian(["code", "enroll", "--stdin"], as: who,
                                                          input: "\(who.password ?? "")\n")
        try result.requireSuccess()
        let line = try #require(result.standardOutput.split(separator: "\n").first { $0.hasPrefix("or enter this key by hand: ") })
        let base32 = line.dropFirst("or enter this key by hand: ".count).replacingOccurrences(of: " ", with: "")
        let secret = try #require(OneTimeCode.base32Decode(base32))
        #expect(secret.count == 20)
        return Enrolment(base32: base32, secret: secret, output: result.standardOutput)
    }

    /// The code the guardian's authenticator app shows `steps` steps from now.
    func code(_ enrolment: Enrolment, steps: Int64 = 0) -> String {
        let now = Int64(Date().timeIntervalSince1970) + 30 * steps
        return OneTimeCode.totp(secret: enrolment.secret, time: UInt64(now))
    }

    /// The demo as the child, answering the alert with "here", then the name and `code`.
    private func requestWithCode(_ guardd: GuardFixture, _ code: String, executable: String? = nil,
                                 guardian: String? = nil) async throws -> ProcessResult {
        try await guardd.app(["request", "--member", "child", "--stdin"],
                             input: "here\n\(guardian ?? guardd.guardian.name)\n\(code)\n", executable: executable)
    }

    /// Every file of the Guard's store, as bytes.
    private func storeBytes(_ guardd: GuardFixture) throws -> Data {
        var all = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: guardd.stateDirectory) {
            all += (try? Data(contentsOf: URL(fileURLWithPath: "\(guardd.stateDirectory)/\(name)"))) ?? Data()
        }
        return all
    }

    @Test func anEnrolledGuardianApprovesAtTheChildsScreenOnceAndTheCodeIsRefusedWhenReplayed() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=0") { guardd in
            let enrolment = try await enroll(guardd)
            #expect(enrolment.output.contains("otpauth://totp/FamilyControls:\(guardd.guardian.name)%40"))
            #expect(enrolment.output.contains("?secret=\(enrolment.base32)&issuer=FamilyControls"))
            // The users file pam_oath reads: root's alone, one line for the guardian.
            var status = stat()
            #expect(stat(guardd.codeFile, &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_uid == 0)
            let hex = enrolment.secret.map { String(format: "%02x", $0) }.joined()
            #expect(try String(contentsOfFile: guardd.codeFile, encoding: .utf8)
                .contains("HOTP/T30/6\t\(guardd.guardian.name)\t-\t\(hex)"))

            let second = try guardd.installDemo(for: guardd.child, appID: "org.example.Second")
            let first = code(enrolment)
            let approved = try await requestWithCode(guardd, first)
            #expect(approved.status == 0, "\(approved.standardError)")
            #expect(approved.standardError.contains("[continue/here/don't allow]"), "the alert offered the guardian here")
            #expect(approved.standardError.contains("\(guardd.guardian.name)'s one-time code (the 6 digits their authenticator app shows now), or press Enter to go back: "),
                    "the code service asked for the code in words: \(approved.standardError)")
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.lock(of: GuardFixture.appID) == "locked")
            #expect(try await guardd.authorization()?["approvedBy"]?.stringValue == guardd.guardian.name)

            // The child saw the code go by: it is worth nothing now.
            let replayed = try await requestWithCode(guardd, first, executable: second + "/familycontrols-demo")
            #expect(replayed.status == 1)
            #expect(replayed.standardError.contains("error 5 authorizationCanceled"), "\(replayed.standardError)")
            #expect(try await guardd.storedStatus(appID: "org.example.Second") == "notDetermined")

            // The next step's code (within one step of drift) is taken.
            let next = code(enrolment, steps: 1)
            let fresh = try await requestWithCode(guardd, next, executable: second + "/familycontrols-demo")
            #expect(fresh.status == 0, "\(fresh.standardError)")
            #expect(try await guardd.storedStatus(appID: "org.example.Second") == "approved")

            // The secret and the codes are in no log, audit row or store file.
            let audit = try await guardd.call("ReadAudit", [:])
            let auditText = String(describing: audit)
            let store = try storeBytes(guardd)
            for secret in [enrolment.base32, hex, first, next] {
                #expect(!Self.holdsToken(guardd.log, secret), "the Guard's log holds a secret or code")
                #expect(!Self.holdsToken(auditText, secret), "the audit trail holds a secret or code")
                #expect(store.range(of: Data(secret.utf8)) == nil, "the store holds a secret or code")
            }
            #expect(auditText.contains("one-time code enrolled"))
        }
    }

    /// Whether `text` holds `token` not run together with other letters or digits.
    static func holdsToken(_ text: String, _ token: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: token) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            if !(before?.isLetter ?? false || before?.isNumber ?? false) && !(after?.isLetter ?? false || after?.isNumber ?? false) {
                return true
            }
            rest = text[range.upperBound...]
        }
        return false
    }

    @Test func aWrongCodeIsRefusedAndTheAppIsSlowedLikeAPassword() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=30s") { guardd in
            let enrolment = try await enroll(guardd)
            let right = code(enrolment)
            let wrong = String(format: "%06d", (Int(right)! + 1) % 1_000_000)
            let refused = try await requestWithCode(guardd, wrong)
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("error 5 authorizationCanceled"), "\(refused.standardError)")
            // The next try, even with the right code, waits out the delay.
            let slowed = try await requestWithCode(guardd, right)
            #expect(slowed.status == 1)
            #expect(slowed.standardError.contains("Too many failed attempts"), "\(slowed.standardError)")
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test func withoutEnrolmentTheAppNeverOffersTheCode() async throws {
        try await withGuard { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            #expect(!app.standardError.contains("[continue/here/don't allow]"), "\(app.standardError)")
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0)
        }
    }

    @Test func answeringHereWhereTheAlertDidNotOfferItCancels() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=no") { guardd in
            // Enrolled, but InSessionApproval=no: the alert offers nothing, and "here" is not taken.
            let enrolment = try await enroll(guardd)
            let result = try await requestWithCode(guardd, code(enrolment))
            #expect(result.status == 1)
            #expect(!result.standardError.contains("[continue/here/don't allow]"))
            #expect(!result.standardError.contains("one-time code (the 6 digits"))
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    /// The attack: the guardian types a code into an alert the child drew
    /// ("for a new app"), and the child spends it, still valid, on a revoke of
    /// the approved app. A code at the child's screen never lifts an
    /// approval: the revoke's alert does not offer it, "here" is not taken,
    /// and the approval and its lock stay; the revoke waits for the
    /// guardian's own session instead.
    @Test func aCodeAtTheChildsScreenNeverRevokes() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=0") { guardd in
            let enrolment = try await enroll(guardd)
            try await requestWithCode(guardd, code(enrolment)).requireSuccess()
            #expect(try await guardd.storedStatus() == "approved")

            let captured = code(enrolment, steps: 1)
            let revoked = try await guardd.app(["revoke", "--stdin"], input: "here\n\(guardd.guardian.name)\n\(captured)\n")
            #expect(revoked.status != 0)
            #expect(!revoked.standardError.contains("[continue/here/don't allow]"), "\(revoked.standardError)")
            #expect(!revoked.standardError.contains("one-time code (the 6 digits"))
            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.lock(of: GuardFixture.appID) == "locked")

            // The same revoke, continued, waits for the guardian's own session.
            let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                   ["revoke", "--stdin"]))
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            #expect(!app.standardError.contains("[continue/here/don't allow]"), "\(app.standardError)")
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(guardd.guardian.password ?? "")\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0)
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test func aGuardianRemovesTheirCodeAndRootRemovesAnyones() async throws {
        try await withGuard { guardd in
            _ = try await enroll(guardd)
            // Someone else's code is root's to remove.
            let other = try await guardd.familyctlAsGuardian(["code", "remove", guardd.guardian.name], as: guardd.adult)
            #expect(other.status == 4, "\(other.standardError)")
            #expect(other.standardError.contains("only root may remove another's one-time code"))

            let own = try await guardd.familyctlAsGuardian(["code", "remove"])
            try own.requireSuccess()
            #expect(own.standardOutput.contains("your one-time code is removed"))
            #expect(!(try String(contentsOfFile: guardd.codeFile, encoding: .utf8)).contains(guardd.guardian.name))
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            _ = try await app.waitForPendingRequest()
            #expect(!app.standardError.contains("[continue/here/don't allow]"), "no code left: the alert offers none")
            app.stop()

            _ = try await enroll(guardd)
            let byRoot = try await guardd.familyctl(["code", "remove", guardd.guardian.name])
            try byRoot.requireSuccess()
            #expect(byRoot.standardOutput.contains("\(guardd.guardian.name)'s one-time code is removed"))
            let again = try await guardd.familyctl(["code", "remove", guardd.guardian.name])
            #expect(again.standardOutput.contains("had no one-time code"))
        }
    }

    /// On the guardian's own terminal: the password asked with echo off,
    /// then the QR code drawn, as tall as its symbol (two module rows a line).
    @Test func enrolmentOnATerminalAsksWithEchoOffAndDrawsTheQRCode() async throws {
        try await withGuard { guardd in
            let command = ([productPath("familyctl"), "code", "enroll", "--socket", guardd.socket]).map { "'\($0)'" }
                .joined(separator: " ")
            let terminal = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
                 "/bin/sh", "-c", command], steps: [("Password:", guardd.guardian.password ?? "")])
            #expect(terminal.status == 0, "\(terminal)")
            #expect(terminal.echoAtPrompts == [false])
            #expect(terminal.showed("Scan it with an authenticator app"))
            // The drawing: lines of block characters, all as wide as the symbol and its margin.
            // "\r\n" is one Character: split on both.
            let lines = terminal.output.split(whereSeparator: \.isNewline).map(String.init)
                .filter { $0.hasPrefix("\u{1B}[40;37;1m") && $0.hasSuffix("\u{1B}[0m") }
                .map { String($0.dropFirst("\u{1B}[40;37;1m".count).dropLast("\u{1B}[0m".count)) }
                .filter { !$0.isEmpty && $0.unicodeScalars.allSatisfy { [" ", "\u{2588}", "\u{2580}", "\u{2584}"].contains($0) } }
            let width = try #require(lines.first?.count, "no QR code on the terminal")
            #expect(lines.allSatisfy { $0.count == width })
            #expect((width - 8 - 17) % 4 == 0, "a QR symbol is 17 + 4 × version modules wide, with 4 on each side")
            #expect(lines.count == (width + 1) / 2)
        }
    }

    /// The QR code on a real terminal (tmux), pictured as a terminal with a
    /// dark and one with a light default background shows it, scans with a
    /// real reader (zbarimg) to the `otpauth://` address enrolment printed.
    @Test(.enabled(if: TerminalScreen.available, "needs tmux and zbarimg (zbar-tools; Config/install.sh installs it)"))
    func theQRCodeScansOnADarkAndOnALightTerminal() async throws {
        try await withGuard { guardd in
            let command = ([productPath("familyctl"), "code", "enroll", "--socket", guardd.socket]).map { "'\($0)'" }
                .joined(separator: " ")
            let screen = try await TerminalScreen.decodeQRCode(
                ["/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
                 "/bin/sh", "-c", command], password: guardd.guardian.password ?? "", done: "This is shown once",
                after: "Scan it with an authenticator app", before: "or enter this key by hand", expectedPrefix: "or open: ")
            #expect(screen.finished, "\(screen)")
            #expect(screen.decodes["dark"] == true, "\(screen)")
            #expect(screen.decodes["light"] == true, "\(screen)")
        }
    }

    @Test func onlyAGuardianEnrols() async throws {
        try await withGuard { guardd in
            let adult = try await guardd.familyctlAsGuardian(["code", "enroll", "--stdin"], as: guardd.adult,
                                                             input: "\(guardd.adult.password ?? "")\n")
            #expect(adult.status == 4)
            #expect(adult.standardError.contains("is not a parent or guardian of anyone in the family"))
            let root = try await guardd.familyctl(["code", "enroll", "--stdin"])
            #expect(root.status == 1)
            #expect(root.standardError.contains("root has no one-time code"))
            #expect(!FileManager.default.fileExists(atPath: guardd.codeFile))
        }
    }
}

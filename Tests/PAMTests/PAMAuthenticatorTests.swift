import Foundation
import PAM
import SystemKit
import Testing
import TestSupport

/// Real libpam, the shipped pam.d files, and real throwaway users.
@Suite(.serialized, .enabled(if: canManageUsers, "needs root to create throwaway users with useradd"))
struct PAMAuthenticatorTests {
    let authenticator = PAMAuthenticator()

    private func request(_ user: String, service: String = "familycontrols-guardian", pamDir: String,
                         ruser: String? = nil, timeout: Duration = .seconds(30)) -> PAMRequest {
        PAMRequest(service: service, user: user, requestingUser: ruser, tty: nil,
                   configurationDirectory: pamDir, promptTimeout: timeout)
    }

    private func failure(_ body: () async throws(PAMError) -> Void) async -> PAMError? {
        do throws(PAMError) {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: ["familycontrols-guardian", "familycontrols-individual"])
    func rightPasswordAuthenticates(service: String) async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let conversation = ScriptedConversation([.answer(try #require(user.password))])
                try await authenticator.authenticate(request(user.name, service: service, pamDir: pamDir),
                                                     conversation: conversation)
                let prompts = conversation.messages.get().filter(\.isPrompt)
                #expect(prompts.count == 1)
                #expect(prompts.first.map { if case .secretPrompt = $0 { true } else { false } } == true)
            }
        }
    }

    @Test func wrongPasswordFailsWithoutSayingWhy() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer("not-the-password")]))
                }
                #expect(error?.reason == .authenticationFailed)
                #expect(error?.publicMessage == "Authentication failed.")
                #expect(error?.description.contains("incorrect password") == true)
                #expect(error?.description.contains("not-the-password") == false)
            }
        }
    }

    @Test func unknownUserLooksLikeWrongPasswordAtThePrompt() async throws {
        try await withShippedPAMDirectory { pamDir in
            let name = "fcnobody" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
            let error = await failure { () throws(PAMError) in
                try await authenticator.authenticate(request(name, pamDir: pamDir),
                                                     conversation: ScriptedConversation([.answer("whatever")]))
            }
            #expect(error?.reason == .unknownUser)
            #expect(error?.publicMessage == "Authentication failed.")
            #expect(error?.description.contains("unknown user \(name)") == true)
        }
    }

    @Test func lockedAccountIsRefused() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                try #require(try await run("/usr/sbin/usermod", ["-L", user.name]).succeeded)
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer(user.password ?? "")]))
                }
                #expect(error?.reason == .accountLocked)
                #expect(error?.publicMessage == "Authentication failed.")
            }
        }
    }

    @Test func expiredAccountIsRefused() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                try #require(try await run("/usr/bin/chage", ["-E", "0", user.name]).succeeded)
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer(user.password ?? "")]))
                }
                #expect(error?.reason == .accountExpired)
                #expect(error?.publicMessage == "The account cannot be used to authorize right now; ask an administrator.")
            }
        }
    }

    @Test func expiredPasswordIsRefused() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                try #require(try await run("/usr/bin/chage", ["-d", "0", user.name]).succeeded)
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer(user.password ?? "")]))
                }
                #expect(error?.reason == .passwordExpired)
            }
        }
    }

    @Test(arguments: ["familycontrols-guardian", "familycontrols-individual"])
    func userWithNoPasswordHasNoUsableMethod(service: String) async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser(password: false) { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: service, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer("")]))
                }
                #expect(error?.reason == .noUsablePassword)
                #expect(error?.publicMessage == "No authentication method is available for this account.")
            }
        }
    }

    @Test func emptyPasswordNeverAuthenticatesDespiteNullok() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser(password: false) { user in
                try #require(try await run("/usr/bin/passwd", ["-d", user.name]).succeeded)
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer("")]))
                }
                #expect(error?.reason == .noUsablePassword)
            }
        }
    }

    @Test func canceledConversationEndsTheTransaction() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir),
                                                         conversation: ScriptedConversation([.cancel]))
                }
                #expect(error?.reason == .canceled)
                #expect(error?.publicMessage == "Authentication canceled.")
            }
        }
    }

    @Test func conversationThatStallsTimesOut() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let started = ContinuousClock.now
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, pamDir: pamDir, timeout: .milliseconds(300)),
                                                         conversation: ScriptedConversation([.stall]))
                }
                #expect(error?.reason == .timedOut)
                #expect(ContinuousClock.now - started < .seconds(10))
            }
        }
    }

    @Test func requestingUserReachesTheStackAsRUSER() async throws {
        try await withTemporaryDirectory { pamDir in
            try """
            auth     required pam_succeed_if.so quiet ruser = expected-child
            auth     required pam_permit.so
            account  required pam_permit.so
            """.write(toFile: "\(pamDir)/ruser-check", atomically: true, encoding: .utf8)
            try await withThrowawayUser { user in
                try await authenticator.authenticate(
                    request(user.name, service: "ruser-check", pamDir: pamDir, ruser: "expected-child"),
                    conversation: ScriptedConversation([]))
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(
                        request(user.name, service: "ruser-check", pamDir: pamDir, ruser: "someone-else"),
                        conversation: ScriptedConversation([]))
                }
                #expect(error != nil)
            }
        }
    }

    @Test func infoAndErrorMessagesAreRelayed() async throws {
        let chatty = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_chatty.so"
        try #require(FileManager.default.fileExists(atPath: chatty), "pam_chatty comes with Debian's libpam-wrapper")
        try await withTemporaryDirectory { pamDir in
            try """
            auth     required \(chatty) num_lines=2 info error
            account  required pam_permit.so
            """.write(toFile: "\(pamDir)/chatty", atomically: true, encoding: .utf8)
            try await withThrowawayUser { user in
                let conversation = ScriptedConversation([])
                try await authenticator.authenticate(request(user.name, service: "chatty", pamDir: pamDir),
                                                     conversation: conversation)
                let messages = conversation.messages.get()
                #expect(messages.filter { if case .info = $0 { true } else { false } }.count >= 2)
                #expect(messages.filter { if case .error = $0 { true } else { false } }.count >= 2)
                #expect(messages.allSatisfy { !$0.isPrompt && !$0.text.isEmpty })
            }
        }
    }

    /// libpam would use `other` for a service with no file, and Debian's
    /// `other` is the common stack: the right password would pass, skipping
    /// whatever the site's service file says. Refused before libpam is asked.
    @Test func aServiceWithNoFileIsRefusedNotSentToOther() async throws {
        try await withTemporaryDirectory { pamDir in
            try "auth required pam_permit.so\naccount required pam_permit.so\n"
                .write(toFile: "\(pamDir)/other", atomically: true, encoding: .utf8)
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: "no-such-service", pamDir: pamDir),
                                                         conversation: ScriptedConversation([]))
                }
                #expect(error?.reason == .serviceMissing)
                #expect(error?.description.contains("\(pamDir)/no-such-service does not exist") == true, "\(String(describing: error))")
            }
        }
    }

    @Test func aServiceFileOthersMayChangeIsRefused() async throws {
        try await withTemporaryDirectory { pamDir in
            let path = "\(pamDir)/open"
            try "auth required pam_permit.so\naccount required pam_permit.so\n".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o666)
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: "open", pamDir: pamDir),
                                                         conversation: ScriptedConversation([]))
                }
                #expect(error?.reason == .serviceMissing)
                #expect(error?.description.contains("can be changed by users other than root") == true)
                chmod(path, 0o644)
                let allowed = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: "open", pamDir: pamDir),
                                                         conversation: ScriptedConversation([]))
                }
                #expect(allowed == nil, "the same file, closed to others, is used")
            }
        }
    }

    /// With the directory unreachable, a stack that checks local passwords
    /// first and then pam_sss ends in `PAM_AUTHINFO_UNAVAIL` (pam_debug gives
    /// the code here) after a local guardian's wrong password: still a wrong
    /// password, counted, or a child who cuts the network guesses for free.
    @Test func aLocalAccountsWrongPasswordStaysWrongWhileTheDirectoryIsDown() async throws {
        try await withTemporaryDirectory { pamDir in
            try """
            auth     [success=2 default=ignore] pam_unix.so
            auth     [success=1 authinfo_unavail=die default=ignore] pam_debug.so auth=authinfo_unavail
            auth     requisite pam_deny.so
            auth     required pam_permit.so
            account  required pam_permit.so
            """.write(toFile: "\(pamDir)/directory-down", atomically: true, encoding: .utf8)
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: "directory-down", pamDir: pamDir),
                                                         conversation: ScriptedConversation([.answer("not-the-password")]))
                }
                #expect(error?.code == .authenticationInfoUnavailable)
                #expect(error?.reason == .authenticationFailed)
                #expect(error?.publicMessage == "Authentication failed.")
            }
        }
    }

    @Test func brokenServiceIsReportedAsMisconfigured() async throws {
        try await withTemporaryDirectory { pamDir in
            try "auth required pam_no_such_module_here.so\naccount required pam_permit.so\n"
                .write(toFile: "\(pamDir)/broken", atomically: true, encoding: .utf8)
            try await withThrowawayUser { user in
                let error = await failure { () throws(PAMError) in
                    try await authenticator.authenticate(request(user.name, service: "broken", pamDir: pamDir),
                                                         conversation: ScriptedConversation([]))
                }
                #expect(error?.reason == .serviceMisconfigured)
                #expect(error?.description.contains("/etc/pam.d/broken") == true)
            }
        }
    }
}

/// PAM blocks while it converses, so the tests call it on a pool thread, the
/// way the Guard does, and await the result.
// Its threads live as long as the test process: a thread that ends after a
// transaction whose stack loaded pam_sss (a machine that uses SSSD) runs
// sss_client's thread-exit destructor, which libpam unloaded with the module.
private let pamThreads = BlockingExecutor(name: "test-pam", maximumThreads: 4, maximumQueued: 64, idleTimeout: .seconds(86_400))

extension PAMAuthenticator {
    fileprivate func authenticate(_ request: PAMRequest, conversation: any PAMConversation) async throws(PAMError) {
        let outcome: Result<Void, PAMError> = await withCheckedContinuation { continuation in
            do {
                try pamThreads.submit {
                    continuation.resume(returning: Result { () throws(PAMError) in
                        try self.authenticateBlocking(request, conversation: conversation)
                    })
                }
            } catch {
                fatalError("the test pool refused work: \(error)")
            }
        }
        try outcome.get()
    }
}

import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import PAM
import SystemKit

/// What a person sees and answers during a request: the alert, and the
/// authentication through PAM, in the app's own session (an individual, or
/// a guardian where `InSessionApproval=yes`) or in a guardian's own session
/// (`familyctl approve`). Failed authentications in a row slow the next ones
/// (see ``AuthenticationBackoff``).
final class AuthenticationSheet: Sendable {
    let ledger: AuthorizationLedger
    let families: FamilyState
    let logger: Logger
    /// A pam.d folder to read instead of `/etc/pam.d` (tests, staging).
    let pamDirectory: String?
    /// Each PAM transaction runs in a helper process of its own.
    let authenticator = PAMHelperClient()
    let backoff = AuthenticationBackoff()
    /// One in-session sheet per user at a time, whatever the app: a child
    /// cannot guess in parallel from several apps.
    let sheets = KeyedSerializer<String>()

    init(ledger: AuthorizationLedger, families: FamilyState, logger: Logger, pamDirectory: String?) {
        self.ledger = ledger
        self.families = families
        self.logger = logger
        self.pamDirectory = pamDirectory
    }

    /// Shows the alert (`question`) and returns when the person chose to go
    /// on; "Don't Allow" runs `refused`, which throws.
    func askAlert(_ question: String, member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                  refused: () throws(GuardFailure) -> Never) throws(GuardFailure) {
        let configuration = families.current.configuration
        let alert: String
        do throws(PAMConversationEnd) {
            let deadline = MonotonicInstant.now.advanced(by: configuration.promptTimeout)
            let answer = try channel.ask(AuthorizationPrompt(kind: .alert, message: question), deadline: deadline)
            alert = answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        } catch {
            throw ended(error, "alert", member: member, caller: caller)
        }
        switch AlertResponse(wire: alert) {
        case .allow?:
            return
        case .refuse?:
            try refused()
        case nil:
            throw ended(.canceled, "alert", member: member, caller: caller)
        }
    }

    /// Audits and logs a prompt that was canceled or timed out, and returns the failure to throw.
    private func ended(_ end: PAMConversationEnd, _ stage: String, member: FamilyControlsMember, caller: Caller) -> GuardFailure {
        let what = end == .timedOut ? "timed out" : "canceled"
        let user = caller.account.name
        ledger.audit(.cancel, actor: user, user: user, appID: caller.app.appID, member: member,
                     outcome: end == .timedOut ? .timedOut : .canceled, detail: stage)
        logger.notice("request: \(caller.app.appID) for \(user) \(what) at the \(stage)")
        return .canceled("the request was \(what)")
    }

    /// The alert (`question`), then the guardian's name (for a child), then
    /// PAM, up to `MaxAttempts` times, all in the app's own session, with the
    /// user's sheet held, waited for until `deadline` and while the app is
    /// there. Returns who authenticated; "Don't Allow" runs `refused`, which throws.
    func authenticateInSession(_ member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                               question: String, deadline: MonotonicInstant,
                               refused: () throws(GuardFailure) -> Never) throws(GuardFailure) -> String {
        let user = caller.account.name
        let approver = try sheets.withExclusiveAccess(to: user, until: deadline, while: { !channel.isClosed }, onWait: {
            logger.info("request: \(caller.app.appID) for \(user) waits for their open sheet to end")
        }) { () throws(GuardFailure) -> String in
            try runPrompts(member, caller: caller, channel: channel, question: question, refused: refused)
        }
        guard let approver else {
            logger.notice("request: \(caller.app.appID) for \(user) stopped waiting for their open sheet")
            throw .canceled(channel.isClosed ? "the app went away while another sheet of \(user)'s was open"
                                             : "another sheet of \(user)'s was still open; try again once it has ended")
        }
        return approver
    }

    private func runPrompts(_ member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                            question: String, refused: () throws(GuardFailure) -> Never) throws(GuardFailure) -> String {
        let configuration = families.current.configuration
        let user = caller.account.name
        let appID = caller.app.appID
        try checkBackoff(member, caller: caller, channel: channel, configuration: configuration)
        func deadline() -> MonotonicInstant { .now.advanced(by: configuration.promptTimeout) }
        try askAlert(question, member: member, caller: caller, channel: channel, refused: refused)

        let service = member == .child ? configuration.guardianService : configuration.individualService
        for attempt in 1...configuration.maxAttempts {
            if attempt > 1 { try checkBackoff(member, caller: caller, channel: channel, configuration: configuration) }
            var authenticating = user
            if member == .child {
                do throws(PAMConversationEnd) {
                    let answer = try channel.ask(AuthorizationPrompt(kind: .guardian, message: "Parent or guardian's user name: "),
                                                 deadline: deadline())
                    authenticating = answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingWhitespace()
                } catch {
                    throw ended(error, "guardian's name", member: member, caller: caller)
                }
                guard isGuardian(authenticating, of: user) else {
                    // A name no one has may be a password typed at the wrong prompt: never repeat it.
                    let known = Principal.isValidName(authenticating) && (try? UserDatabase.user(named: authenticating)) != nil
                    let who = known ? authenticating : "an unknown user"
                    ledger.audit(.request, actor: known ? authenticating : user, user: user, appID: appID, member: member,
                                 outcome: .refused, detail: "\(who) is not a guardian of \(user) (attempt \(attempt))")
                    logger.notice("request: \(who) is not a guardian of \(user)")
                    channel.tell(AuthorizationPrompt(kind: .error, message: known
                        ? "Sorry, \(authenticating) is not a parent or guardian of \(user)."
                        : "Sorry, that is not a parent or guardian of \(user)."))
                    continue
                }
            }
            let pam = PAMRequest(service: service, user: authenticating, requestingUser: member == .child ? user : nil,
                                 tty: nil, configurationDirectory: pamDirectory, promptTimeout: configuration.promptTimeout)
            do throws(PAMError) {
                try authenticator.authenticateBlocking(pam, conversation: ChannelConversation(channel: channel))
                backoff.recordSuccess(of: user)
                return authenticating
            } catch {
                logger.notice("request: \(appID) for \(user): \(error)")
                switch error.reason {
                case .canceled: throw ended(.canceled, "authentication", member: member, caller: caller)
                case .timedOut: throw ended(.timedOut, "authentication", member: member, caller: caller)
                case .noUsablePassword where member == .individual:
                    ledger.audit(.cancel, actor: user, user: user, appID: appID, member: member,
                                 outcome: .noAuthenticationMethod, detail: error.description)
                    throw GuardFailure(.authenticationMethodUnavailable,
                        "\(user) has no usable password or other way to authenticate; ask an administrator")
                case .serviceMisconfigured, .serviceMissing, .helperFailed:
                    ledger.audit(.cancel, actor: authenticating, user: user, appID: appID, member: member,
                                 outcome: .pamError, detail: error.description)
                    throw GuardFailure(.unavailable, error.publicMessage)
                case .tooManyTries:
                    backoff.recordFailure(of: user)
                    ledger.audit(.cancel, actor: authenticating, user: user, appID: appID, member: member,
                                 outcome: .tooManyTries, detail: error.description)
                    throw .canceled(error.publicMessage)
                default:
                    backoff.recordFailure(of: user)
                    ledger.audit(.request, actor: authenticating, user: user, appID: appID, member: member,
                                 outcome: .authenticationFailed, detail: "\(error.description) (attempt \(attempt))")
                    if attempt < configuration.maxAttempts {
                        channel.tell(AuthorizationPrompt(kind: .error, message: "Sorry, try again."))
                    }
                }
            }
        }
        ledger.audit(.cancel, actor: user, user: user, appID: appID, member: member,
                     outcome: .tooManyFailures, detail: "\(configuration.maxAttempts) failed attempts")
        throw .canceled("\(configuration.maxAttempts) incorrect authentication attempts")
    }

    /// PAM on the guardian service for the guardian themself, on their own
    /// terminal (through `familyctl`), up to `MaxAttempts` times, before they
    /// change `child`'s protection (`context` names how, for the audit trail
    /// and the log); failures in a row slow the next attempts as for a request.
    func authenticateGuardian(_ guardian: UserAccount, child: String, appID: String?, context: String,
                              over channel: any RequestChannel) throws(GuardFailure) {
        let configuration = families.current.configuration
        let key = "guardian " + guardian.name
        for attempt in 1...configuration.maxAttempts {
            if let wait = backoff.remainingWait(for: key, freeFailures: configuration.maxAttempts,
                                                delay: configuration.failureDelay) {
                let message = "Too many failed attempts. Try again in \(wait.spokenSeconds)."
                channel.tell(AuthorizationPrompt(kind: .error, message: message))
                throw .canceled(message)
            }
            let pam = PAMRequest(service: configuration.guardianService, user: guardian.name, requestingUser: child,
                                 tty: nil, configurationDirectory: pamDirectory, promptTimeout: configuration.promptTimeout)
            do throws(PAMError) {
                try authenticator.authenticateBlocking(pam, conversation: ChannelConversation(channel: channel))
                backoff.recordSuccess(of: key)
                return
            } catch {
                logger.notice("\(context): \(guardian.name) did not authenticate: \(error)")
                switch error.reason {
                case .canceled, .timedOut:
                    if error.reason == .timedOut {
                        ledger.audit(.request, actor: guardian.name, user: child, appID: appID, member: .child,
                                     outcome: .timedOut, detail: "\(context): \(error.description)")
                    }
                    throw .canceled("the authentication was \(error.reason == .timedOut ? "timed out" : "canceled")")
                case .serviceMisconfigured, .serviceMissing, .helperFailed:
                    ledger.audit(.request, actor: guardian.name, user: child, appID: appID, member: .child,
                                 outcome: .pamError, detail: "\(context): \(error.description)")
                    throw GuardFailure(.unavailable, error.publicMessage)
                default:
                    backoff.recordFailure(of: key)
                    ledger.audit(.request, actor: guardian.name, user: child, appID: appID, member: .child,
                                 outcome: .authenticationFailed, detail: "\(context): \(error.description) (attempt \(attempt))")
                    if error.reason == .tooManyTries { throw .canceled(error.publicMessage) }
                    if attempt < configuration.maxAttempts {
                        channel.tell(AuthorizationPrompt(kind: .error, message: "Sorry, try again."))
                    }
                }
            }
        }
        throw .canceled("\(configuration.maxAttempts) incorrect authentication attempts")
    }

    /// Refuses an attempt while `user` must wait after failing too often.
    private func checkBackoff(_ member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                              configuration: GuardConfiguration) throws(GuardFailure) {
        let user = caller.account.name
        guard let wait = backoff.remainingWait(for: user, freeFailures: configuration.maxAttempts,
                                               delay: configuration.failureDelay) else { return }
        let failures = backoff.failures(of: user)
        ledger.audit(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: .refused,
                     detail: "\(failures) failed authentications in a row; next attempt in \(wait.spokenSeconds)")
        logger.notice("request: \(caller.app.appID) for \(user) refused: \(failures) failed authentications in a row, "
            + "next attempt allowed in \(wait.spokenSeconds)")
        let message = "Too many failed attempts. Try again in \(wait.spokenSeconds)."
        channel.tell(AuthorizationPrompt(kind: .error, message: message))
        throw .canceled(message)
    }

    private func isGuardian(_ name: String, of child: String) -> Bool {
        guard Principal.isValidName(name), let account = try? UserDatabase.user(named: name) else { return false }
        return (try? families.current.isGuardian(account, of: child)) == true
    }
}

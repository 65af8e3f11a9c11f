import AuthorizationRules
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
    /// Who authenticates, and for what: the one attempt loop's parameters.
    enum Authentication: Sendable {
        /// In the app's own session: the individual themself, or for a child
        /// a parent or guardian who first gives their name.
        case inSession(FamilyControlsMember, Caller)
        /// A parent or guardian on their own terminal (through `familyctl`),
        /// before they change `child`'s protection; `context` names how, for
        /// the audit trail and the log.
        case guardian(UserAccount, child: String, appID: String?, context: String)
    }

    let ledger: AuthorizationLedger
    let families: FamilyState
    let logger: Logger
    /// A pam.d folder to read instead of `/etc/pam.d` (tests, staging).
    let pamDirectory: String?
    /// Each PAM transaction runs in a helper process of its own (``PAMHelperClient``).
    let authenticator: any Authenticating
    let backoff = AuthenticationBackoff()
    /// One in-session sheet per user at a time, whatever the app: a child
    /// cannot guess in parallel from several apps.
    let sheets = KeyedSerializer<String>()

    init(ledger: AuthorizationLedger, families: FamilyState, logger: Logger, pamDirectory: String?,
         authenticator: any Authenticating) {
        self.ledger = ledger
        self.families = families
        self.logger = logger
        self.pamDirectory = pamDirectory
        self.authenticator = authenticator
    }

    /// Shows the alert (`question`) and returns the person's answer; with
    /// `offeringGuardianHere`, "a parent or guardian is here" is one of them.
    /// - Throws: the cancellation or timeout, audited, as the app should hear
    ///   it; an answer the alert did not offer cancels.
    func askAlert(_ question: String, member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                  offeringGuardianHere: Bool = false) throws(GuardFailure) -> AlertResponse {
        let configuration = families.current.configuration
        let alert: String
        do throws(PAMConversationEnd) {
            let deadline = MonotonicInstant.now.advanced(by: configuration.promptTimeout)
            let prompt = AuthorizationPrompt(kind: .alert, message: question, offersGuardianHere: offeringGuardianHere)
            let answer = try channel.ask(prompt, deadline: deadline)
            alert = answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        } catch {
            throw ended(error, "alert", member: member, caller: caller)
        }
        guard let answer = AlertResponse(wire: alert), offeringGuardianHere || answer != .guardianHere else {
            throw ended(.canceled, "alert", member: member, caller: caller)
        }
        return answer
    }

    /// Audits and logs a prompt that was canceled or timed out, and returns the failure to throw.
    private func ended(_ end: PAMConversationEnd, _ stage: String, member: FamilyControlsMember, caller: Caller) -> GuardFailure {
        let what = end == .timedOut ? "timed out" : "canceled"
        let user = caller.account.name
        ledger.audit(.cancel, actor: user, user: user, appID: caller.app.appID, member: member,
                     outcome: end == .timedOut ? .timedOut : .canceled, detail: stage)
        logger.notice("request: \(caller.app.appID) for \(user) \(what) at the \(stage)")
        return AuthorizationRules.ended(timedOut: end == .timedOut)
    }

    /// Runs `body` (the alert and the authentication in the app's session)
    /// with the user's sheet held, waited for until `deadline` and while the
    /// app is there.
    /// - Throws: `body`'s failure, or the cancellation when the wait ended first.
    func withSheet<R>(of caller: Caller, channel: any RequestChannel, deadline: MonotonicInstant,
                      _ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        let user = caller.account.name
        let result = try sheets.withExclusiveAccess(to: user, until: deadline, unless: channel.hangUp, onWait: {
            logger.info("request: \(caller.app.appID) for \(user) waits for their open sheet to end")
        }, body)
        guard let result else {
            logger.notice("request: \(caller.app.appID) for \(user) stopped waiting for their open sheet")
            throw .canceled(channel.isClosed ? "the app went away while another sheet of \(user)'s was open"
                                             : "another sheet of \(user)'s was still open; try again once it has ended")
        }
        return result
    }

    /// One request's attempts at the child's screen, kept across going back
    /// to the alert: going back neither counts as an attempt nor gives one back.
    struct InPersonAttempts: Sendable {
        /// Attempts this request has used (a name that is not a guardian's, or PAM's refusal).
        var used = 0
        /// How many more times the prompts offer going back (``GuardLimits/returnsToAlertPerRequest``).
        var returnsLeft: Int
    }

    /// How an authentication that offered going back ended, short of a failure.
    enum InPersonOutcome: Sendable {
        case authenticated(by: String)
        /// The person answered the name prompt, or PAM's first prompt, with
        /// nothing: back to the alert's choices.
        case wentBack
    }

    /// PAM, up to `MaxAttempts` times, for `who` over `channel`; for a child
    /// in the app's session, the guardian's name first at each attempt.
    /// Failures in a row slow the next attempts (``AuthenticationBackoff``).
    /// - Parameter service: the pam.d service instead of `who`'s own: the
    ///   guardian code service, for a guardian's one-time code in the app.
    /// - Returns: who authenticated.
    /// - Throws: the refusal, cancellation, timeout or PAM failure, audited.
    func authenticate(_ who: Authentication, over channel: any RequestChannel,
                      service: String? = nil) throws(GuardFailure) -> String {
        var attempts = InPersonAttempts(returnsLeft: 0)
        switch try authenticate(who, over: channel, service: service, attempts: &attempts) {
        case .authenticated(let name): return name
        case .wentBack: throw .canceled("the authentication was canceled")
        }
    }

    /// ``authenticate(_:over:service:)`` continuing `attempts`, where the
    /// name prompt and PAM's first prompt offer going back (nothing typed)
    /// while `attempts.returnsLeft` lasts. The back-off is checked before
    /// every attempt, as always.
    func authenticate(_ who: Authentication, over channel: any RequestChannel, service: String? = nil,
                      attempts: inout InPersonAttempts) throws(GuardFailure) -> InPersonOutcome {
        let configuration = families.current.configuration
        while attempts.used < configuration.maxAttempts {
            let attempt = attempts.used + 1
            try checkBackoff(who, channel: channel, configuration: configuration)
            let goingBack = attempts.returnsLeft > 0 ? ChannelConversation.GoingBack() : nil
            let name: String
            switch try authenticatingName(who, attempt: attempt, channel: channel, configuration: configuration,
                                          offeringBack: goingBack != nil) {
            case .notAGuardian:
                attempts.used = attempt
                continue
            case .back:
                attempts.returnsLeft -= 1
                return .wentBack
            case .name(let named):
                name = named
            }
            let pam = PAMRequest(service: service ?? who.service(configuration), user: name, requestingUser: who.requestingUser,
                                 tty: nil, configurationDirectory: pamDirectory, promptTimeout: configuration.promptTimeout)
            do throws(PAMError) {
                try authenticator.authenticate(pam, conversation: ChannelConversation(channel: channel, goingBack: goingBack))
                backoff.recordSuccess(of: who.backoffKey)
                return .authenticated(by: name)
            } catch {
                // Nothing typed at PAM's first prompt: PAM had no answer, so nothing was tried.
                if let goingBack, goingBack.wentBack {
                    attempts.returnsLeft -= 1
                    return .wentBack
                }
                attempts.used = attempt
                try failed(error, who, name: name, attempt: attempt, channel: channel, configuration: configuration)
            }
        }
        if case .inSession(let member, let caller) = who {
            let user = caller.account.name
            ledger.audit(.cancel, actor: user, user: user, appID: caller.app.appID, member: member,
                         outcome: .tooManyFailures, detail: "\(configuration.maxAttempts) failed attempts")
        }
        throw .canceled("\(configuration.maxAttempts) incorrect authentication attempts")
    }

    /// The answer to "whose authentication is this".
    private enum NameAnswer {
        case name(String)
        /// Told and audited; the attempt is used.
        case notAGuardian
        /// Nothing typed where going back was offered.
        case back
    }

    /// Who PAM authenticates at this attempt: the individual, the guardian
    /// named, or after a name that is not a guardian's (told, audited),
    /// nothing; with `offeringBack`, nothing typed goes back.
    private func authenticatingName(_ who: Authentication, attempt: Int, channel: any RequestChannel,
                                    configuration: GuardConfiguration, offeringBack: Bool) throws(GuardFailure) -> NameAnswer {
        switch who {
        case .guardian(let guardian, _, _, _):
            return .name(guardian.name)
        case .inSession(.individual, let caller):
            return .name(caller.account.name)
        case .inSession(let member, let caller):
            let user = caller.account.name
            let name: String
            do throws(PAMConversationEnd) {
                let asked = "Parent or guardian's user name: "
                let prompt = AuthorizationPrompt(kind: .guardian, message: offeringBack ? ChannelConversation.offeringBack(asked) : asked)
                let answer = try channel.ask(prompt, deadline: .now.advanced(by: configuration.promptTimeout))
                name = answer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingWhitespace()
            } catch {
                throw ended(error, "guardian's name", member: member, caller: caller)
            }
            if offeringBack && name.isEmpty { return .back }
            guard !isGuardian(name, of: user) else { return .name(name) }
            // A name no one has may be a password typed at the wrong prompt: never repeat it.
            let known = Principal.isValidName(name) && (try? UserDatabase.user(named: name)) != nil
            let shown = known ? name : "an unknown user"
            ledger.audit(.request, actor: known ? name : user, user: user, appID: caller.app.appID, member: member,
                         outcome: .refused, detail: "\(shown) is not a guardian of \(user) (attempt \(attempt))")
            logger.notice("request: \(shown) is not a guardian of \(user)")
            channel.tell(AuthorizationPrompt(kind: .error, message: known
                ? "Sorry, \(name) is not a parent or guardian of \(user)."
                : "Sorry, that is not a parent or guardian of \(user)."))
            return .notAGuardian
        }
    }

    /// Handles PAM's refusal of attempt `attempt`: returns to try again, or throws.
    private func failed(_ error: PAMError, _ who: Authentication, name: String, attempt: Int,
                        channel: any RequestChannel, configuration: GuardConfiguration) throws(GuardFailure) {
        let (user, appID, member) = who.subject
        let context: String
        switch who {
        case .inSession(let member, let caller):
            context = ""
            logger.notice("request: \(caller.app.appID) for \(user): \(error)")
            switch error.reason {
            case .canceled: throw ended(.canceled, "authentication", member: member, caller: caller)
            case .timedOut: throw ended(.timedOut, "authentication", member: member, caller: caller)
            case .noUsablePassword where member == .individual:
                ledger.audit(.cancel, actor: user, user: user, appID: appID, member: member,
                             outcome: .noAuthenticationMethod, detail: error.description)
                throw GuardFailure(.authenticationMethodUnavailable,
                    "\(user) has no usable password or other way to authenticate; ask an administrator")
            case .serviceMisconfigured, .serviceMissing, .helperFailed:
                ledger.audit(.cancel, actor: name, user: user, appID: appID, member: member,
                             outcome: .pamError, detail: error.description)
                throw GuardFailure(.unavailable, error.publicMessage)
            case .directoryUnavailable:
                ledger.audit(.cancel, actor: name, user: user, appID: appID, member: member,
                             outcome: .directoryUnavailable, detail: error.description)
                throw GuardFailure(.unavailable, error.publicMessage)
            case .tooManyTries:
                backoff.recordFailure(of: who.backoffKey)
                ledger.audit(.cancel, actor: name, user: user, appID: appID, member: member,
                             outcome: .tooManyTries, detail: error.description)
                throw .canceled(error.publicMessage)
            default:
                break
            }
        case .guardian(_, _, _, let how):
            context = how + ": "
            logger.notice("\(how): \(name) did not authenticate: \(error)")
            switch error.reason {
            case .canceled, .timedOut:
                if error.reason == .timedOut {
                    ledger.audit(.request, actor: name, user: user, appID: appID, member: member,
                                 outcome: .timedOut, detail: "\(context)\(error.description)")
                }
                throw .canceled("the authentication was \(error.reason == .timedOut ? "timed out" : "canceled")")
            case .serviceMisconfigured, .serviceMissing, .helperFailed:
                ledger.audit(.request, actor: name, user: user, appID: appID, member: member,
                             outcome: .pamError, detail: "\(context)\(error.description)")
                throw GuardFailure(.unavailable, error.publicMessage)
            case .directoryUnavailable:
                ledger.audit(.request, actor: name, user: user, appID: appID, member: member,
                             outcome: .directoryUnavailable, detail: "\(context)\(error.description)")
                throw GuardFailure(.unavailable, error.publicMessage)
            default:
                break
            }
        }
        // A wrong password (or the like): counted, audited, and asked again.
        // An unreachable directory is none of these: it ended above, uncounted.
        backoff.recordFailure(of: who.backoffKey)
        ledger.audit(.request, actor: name, user: user, appID: appID, member: member,
                     outcome: .authenticationFailed, detail: "\(context)\(error.description) (attempt \(attempt))")
        if error.reason == .tooManyTries { throw .canceled(error.publicMessage) }
        if attempt < configuration.maxAttempts {
            channel.tell(AuthorizationPrompt(kind: .error, message: "Sorry, try again."))
        }
    }

    /// Refuses an attempt while `who` must wait after failing too often.
    func checkBackoff(_ who: Authentication, channel: any RequestChannel,
                      configuration: GuardConfiguration) throws(GuardFailure) {
        let key = who.backoffKey
        guard let wait = backoff.remainingWait(for: key, freeFailures: configuration.maxAttempts,
                                               delay: configuration.failureDelay) else { return }
        if case .inSession(let member, let caller) = who {
            let user = caller.account.name
            let failures = backoff.failures(of: key)
            ledger.audit(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: .refused,
                         detail: "\(failures) failed authentications in a row; next attempt in \(wait.spokenSeconds)")
            logger.notice("request: \(caller.app.appID) for \(user) refused: \(failures) failed authentications in a row, "
                + "next attempt allowed in \(wait.spokenSeconds)")
        }
        let message = "Too many failed attempts. Try again in \(wait.spokenSeconds)."
        channel.tell(AuthorizationPrompt(kind: .error, message: message))
        throw .canceled(message)
    }

    private func isGuardian(_ name: String, of child: String) -> Bool {
        guard Principal.isValidName(name), let account = try? UserDatabase.user(named: name) else { return false }
        return (try? families.current.isGuardian(account, of: child)) == true
    }
}

extension AuthenticationSheet.Authentication {
    /// Whose failures slow whose next attempts: the app's user in their
    /// session, the guardian on their own terminal.
    var backoffKey: String {
        switch self {
        case .inSession(_, let caller): caller.account.name
        case .guardian(let guardian, _, _, _): "guardian " + guardian.name
        }
    }

    /// The PAM service: the guardian's, or the individual's for themself.
    func service(_ configuration: GuardConfiguration) -> String {
        switch self {
        case .inSession(.individual, _): configuration.individualService
        case .inSession, .guardian: configuration.guardianService
        }
    }

    /// The child a guardian authenticates for, as PAM is told.
    var requestingUser: String? {
        switch self {
        case .inSession(.individual, _): nil
        case .inSession(_, let caller): caller.account.name
        case .guardian(_, let child, _, _): child
        }
    }

    /// The user, app and member the audit rows are about.
    var subject: (user: String, appID: String?, member: FamilyControlsMember) {
        switch self {
        case .inSession(let member, let caller): (caller.account.name, caller.app.appID, member)
        case .guardian(_, let child, let appID, _): (child, appID, .child)
        }
    }
}

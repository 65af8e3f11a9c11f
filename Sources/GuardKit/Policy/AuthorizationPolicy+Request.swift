import FamilyControlsModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import FamilyConfiguration
import PAM

extension AuthorizationPolicy {
    /// `requestAuthorization(for:)`: runs the whole flow on the calling thread,
    /// which must be one of the Guard's own (it blocks on people and on PAM).
    ///
    /// A child's request shows the alert in the app, then waits for a parent
    /// or guardian to decide it from their own session (``awaitGuardian(_:caller:channel:)``):
    /// nothing secret passes through the child's app. With `InSessionApproval=yes`
    /// the guardian may authenticate in the app instead, as an individual
    /// always does for themself. Requests for one app run one at a time; a
    /// second finds the first one's outcome. In-session sheets open one per
    /// user at a time, whatever the app (see ``sheets``). The decision is
    /// saved under the (user, app) lock only, so an administrator's
    /// `familyctl set` never waits for a person; the later decision stands.
    /// - Returns: the status after the request (always `approved` on success).
    /// - Throws: ``GuardFailure`` with the FamilyControlsError case to report.
    package func request(_ member: FamilyControlsMember, from caller: Caller,
                         over channel: any RequestChannel) throws(GuardFailure) -> AuthorizationStatus {
        guard !channel.isClosed else { throw .canceled("the app hung up before the request started") }
        if try alreadyDecided(member, for: caller) { return .approved }
        return try asking.withExclusiveAccess(to: caller.key, onWait: {
            logger.info("request: \(caller.app.appID) for \(caller.account.name) waits for the request open for it to end")
        }) { () throws(GuardFailure) -> AuthorizationStatus in
            // Another request for this app may have ended while this one waited.
            if try alreadyDecided(member, for: caller) { return .approved }
            let user = caller.account.name
            try checkQuota(member, caller: caller)
            audit(event(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: "started"))
            logger.info("request: \(caller.app.appID) for \(user) as \(member) (pid executable \(DisplayText.sanitized(caller.app.executable)))")
            let question = member == .child
                ? "Allow “\(caller.app.displayName)” to provide parental controls for \(user)?"
                : "Allow “\(caller.app.displayName)” to provide parental controls for you (\(user))?"
            let refused = { () throws(GuardFailure) -> Never in try self.refuse(caller, member: member) }
            do throws(GuardFailure) {
                if member == .child && !family.configuration.inSessionApproval {
                    try askAlert(question, member: member, caller: caller, channel: channel, refused: refused)
                    try awaitGuardian(.approve, caller: caller, channel: channel)
                    return .approved
                }
                let approver = try sheets.withExclusiveAccess(to: user, onWait: {
                    logger.info("request: \(caller.app.appID) for \(user) waits for their open sheet to end")
                }) { () throws(GuardFailure) -> String in
                    try runPrompts(member, caller: caller, channel: channel, question: question, refused: refused)
                }
                try requests.withExclusiveAccess(to: caller.key) { () throws(GuardFailure) in
                    try approve(caller, member: member, by: approver)
                }
                return .approved
            } catch where error.resultingStatus == .approved {
                // Approved meanwhile by someone who may: that is the answer.
                return .approved
            }
        }
    }

    /// Whether `caller` may have its request answered at once: approved for
    /// this very directory. Throws the refusals that need no prompt.
    private func alreadyDecided(_ member: FamilyControlsMember, for caller: Caller) throws(GuardFailure) -> Bool {
        let user = caller.account.name
        let isChild: Bool
        do throws(Errno) {
            isChild = try family.isChild(caller.account)
        } catch {
            logger.error("cannot resolve family membership of \(user): \(error)")
            throw GuardFailure(.networkError, "the user directory could not be reached to check the family")
        }
        let current = try authorization(user: user, appID: caller.app.appID)
        switch member {
        case .child:
            guard isChild else {
                audit(event(.request, actor: user, user: user, appID: caller.app.appID, member: member,
                            outcome: "refused", detail: "not a child in the family"))
                throw GuardFailure(.invalidAccountType,
                    "\(user) is not a child in the family configuration; ask an administrator to add them to Children=")
            }
            guard let current, current.status == .approved, current.member == .child else { return false }
            // Approved for this very directory: at once, with no prompt.
            if current.appIdentity == caller.app.directoryIdentity { return true }
            throw GuardFailure(.authorizationConflict,
                "\(caller.app.appID) is already approved for \(user) in another folder (\(DisplayText.sanitized(current.appPath))); "
                + "a parent or guardian must revoke that approval first")
        case .individual:
            guard !isChild else {
                audit(event(.request, actor: user, user: user, appID: caller.app.appID, member: member,
                            outcome: "refused", detail: "a child cannot authorize as an individual"))
                throw GuardFailure(.invalidAccountType,
                    "\(user) is a child in the family: a parent or guardian must approve (request .child)")
            }
            if current?.status == .approved && current?.member == .individual { return true }
            if current?.status == .approved {
                throw GuardFailure(.authorizationConflict,
                    "\(caller.app.appID) is already approved for \(user) as a child; revoke it first")
            }
            return false
        }
    }

    /// "Don't Allow" at the alert: denied, with no authentication. It never
    /// undoes an approval an administrator or guardian made meanwhile.
    private func refuse(_ caller: Caller, member: FamilyControlsMember) throws(GuardFailure) -> Never {
        let user = caller.account.name
        let resulting = try requests.withExclusiveAccess(to: caller.key) { () throws(GuardFailure) -> AuthorizationStatus in
            if let now = try authorization(user: user, appID: caller.app.appID), now.status == .approved {
                audit(event(.deny, actor: user, user: user, appID: caller.app.appID, member: member,
                            outcome: "no effect", detail: "Don't Allow after it was approved by \(now.approvedBy ?? "an administrator")"))
                return .approved
            }
            try deny(caller, member: member, actor: user)
            return .denied
        }
        var failure = GuardFailure.canceled("\(caller.app.displayName) was not allowed to provide parental controls")
        failure.resultingStatus = resulting
        throw failure
    }

    /// Refuses an attempt while `user` must wait after failing too often.
    private func checkBackoff(_ member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                              configuration: GuardConfiguration) throws(GuardFailure) {
        let user = caller.account.name
        guard let wait = backoff.remainingWait(for: user, freeFailures: configuration.maxAttempts,
                                               delay: configuration.failureDelay) else { return }
        let failures = backoff.failures(of: user)
        audit(event(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: "refused",
                    detail: "\(failures) failed authentications in a row; next attempt in \(wait.spokenSeconds)"))
        logger.notice("request: \(caller.app.appID) for \(user) refused: \(failures) failed authentications in a row, "
            + "next attempt allowed in \(wait.spokenSeconds)")
        let message = "Too many failed attempts. Try again in \(wait.spokenSeconds)."
        channel.tell(AuthorizationPrompt(kind: .error, message: message))
        throw .canceled(message)
    }

    /// Shows the alert (`question`) and returns when the person chose to go
    /// on; "Don't Allow" runs `refused`, which throws.
    func askAlert(_ question: String, member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                  refused: () throws(GuardFailure) -> Never) throws(GuardFailure) {
        let configuration = family.configuration
        let alert: String
        do throws(PAMConversationEnd) {
            let deadline = ContinuousClock.now.advanced(by: configuration.promptTimeout)
            alert = String(decoding: try channel.ask(AuthorizationPrompt(kind: .alert, message: question), deadline: deadline).bytes,
                           as: UTF8.self)
        } catch {
            throw ended(error, "alert", member: member, caller: caller)
        }
        switch AlertAnswer(rawValue: alert) {
        case .continue?:
            return
        case .dontAllow?:
            try refused()
        case nil:
            throw ended(.canceled, "alert", member: member, caller: caller)
        }
    }

    /// Audits and logs a prompt that was canceled or timed out, and returns the failure to throw.
    func ended(_ end: PAMConversationEnd, _ stage: String, member: FamilyControlsMember, caller: Caller) -> GuardFailure {
        let what = end == .timedOut ? "timed out" : "canceled"
        let user = caller.account.name
        audit(event(.cancel, actor: user, user: user, appID: caller.app.appID, member: member, outcome: what, detail: stage))
        logger.notice("request: \(caller.app.appID) for \(user) \(what) at the \(stage)")
        return .canceled("the request was \(what)")
    }

    /// The alert (`question`), then the guardian's name (for a child), then
    /// PAM, up to `MaxAttempts` times, all in the app's own session. Returns
    /// who authenticated; "Don't Allow" runs `refused`, which throws.
    ///
    /// A user who failed too often in a row waits (see ``AuthenticationBackoff``).
    /// Call with the user's ``sheets`` entry held.
    func runPrompts(_ member: FamilyControlsMember, caller: Caller, channel: any RequestChannel,
                    question: String, refused: () throws(GuardFailure) -> Never) throws(GuardFailure) -> String {
        let configuration = family.configuration
        let user = caller.account.name
        let appID = caller.app.appID
        try checkBackoff(member, caller: caller, channel: channel, configuration: configuration)
        func deadline() -> ContinuousClock.Instant { .now.advanced(by: configuration.promptTimeout) }
        func ended(_ end: PAMConversationEnd, _ stage: String) -> GuardFailure {
            self.ended(end, stage, member: member, caller: caller)
        }

        try askAlert(question, member: member, caller: caller, channel: channel, refused: refused)

        let service = member == .child ? configuration.guardianService : configuration.individualService
        for attempt in 1...configuration.maxAttempts {
            if attempt > 1 { try checkBackoff(member, caller: caller, channel: channel, configuration: configuration) }
            var authenticating = user
            if member == .child {
                do throws(PAMConversationEnd) {
                    let answer = try channel.ask(AuthorizationPrompt(kind: .guardian, message: "Parent or guardian's user name: "), deadline: deadline())
                    authenticating = String(decoding: answer.bytes, as: UTF8.self).trimmingWhitespace()
                } catch {
                    throw ended(error, "guardian's name")
                }
                guard isGuardian(authenticating, of: user) else {
                    // A name no one has may be a password typed at the wrong prompt: never repeat it.
                    let known = Principal.isValidName(authenticating) && (try? UserDatabase.user(named: authenticating)) != nil
                    let who = known ? authenticating : "an unknown user"
                    audit(event(.request, actor: known ? authenticating : user, user: user, appID: appID, member: member,
                                outcome: "refused", detail: "\(who) is not a guardian of \(user) (attempt \(attempt))"))
                    logger.notice("request: \(who) is not a guardian of \(user)")
                    channel.tell(AuthorizationPrompt(kind: .error, message: known
                        ? "Sorry, \(authenticating) is not a parent or guardian of \(user)."
                        : "Sorry, that is not a parent or guardian of \(user)."))
                    continue
                }
            }
            let pam = PAMRequest(service: service, user: authenticating, requestingUser: member == .child ? user : nil,
                                 tty: nil, configurationDirectory: settings.pamDirectory,
                                 promptTimeout: configuration.promptTimeout)
            do throws(PAMError) {
                try authenticator.authenticateBlocking(pam, conversation: ChannelConversation(channel: channel))
                backoff.recordSuccess(of: user)
                return authenticating
            } catch {
                logger.notice("request: \(appID) for \(user): \(error)")
                switch error.reason {
                case .canceled: throw ended(.canceled, "authentication")
                case .timedOut: throw ended(.timedOut, "authentication")
                case .noUsablePassword where member == .individual:
                    audit(event(.cancel, actor: user, user: user, appID: appID, member: member,
                                outcome: "no authentication method", detail: error.description))
                    throw GuardFailure(.authenticationMethodUnavailable,
                        "\(user) has no usable password or other way to authenticate; ask an administrator")
                case .serviceMisconfigured:
                    audit(event(.cancel, actor: authenticating, user: user, appID: appID, member: member,
                                outcome: "pam error", detail: error.description))
                    throw GuardFailure(.unavailable, error.publicMessage)
                case .tooManyTries:
                    backoff.recordFailure(of: user)
                    audit(event(.cancel, actor: authenticating, user: user, appID: appID, member: member,
                                outcome: "too many tries", detail: error.description))
                    throw .canceled(error.publicMessage)
                default:
                    backoff.recordFailure(of: user)
                    audit(event(.request, actor: authenticating, user: user, appID: appID, member: member,
                                outcome: "authentication failed", detail: "\(error.description) (attempt \(attempt))"))
                    if attempt < configuration.maxAttempts {
                        channel.tell(AuthorizationPrompt(kind: .error, message: "Sorry, try again."))
                    }
                }
            }
        }
        audit(event(.cancel, actor: user, user: user, appID: appID, member: member,
                    outcome: "too many failures", detail: "\(configuration.maxAttempts) failed attempts"))
        throw .canceled("\(configuration.maxAttempts) incorrect authentication attempts")
    }

    private func isGuardian(_ name: String, of child: String) -> Bool {
        guard Principal.isValidName(name), let account = try? UserDatabase.user(named: name) else { return false }
        return (try? family.isGuardian(account, of: child)) == true
    }

    /// Locks (child only), then stores the approval durably, audits, notifies.
    private func approve(_ caller: Caller, member: FamilyControlsMember, by approver: String) throws(GuardFailure) {
        let record = AuthorizationRecord(
            user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: member,
            status: .approved, approvedBy: approver, updatedAt: Date(), appPath: caller.app.directory,
            appIdentity: caller.app.directoryIdentity)
        try approve(record, directory: caller.directory, audit: event(
            .approve, actor: approver, user: record.user, appID: record.appID, member: member, outcome: "approved"))
        logger.notice("approved: \(record.appID) for \(record.user) as \(member) by \(approver)")
    }

    /// Refuses a request while `user` has started too many lately.
    private func checkQuota(_ member: FamilyControlsMember, caller: Caller) throws(GuardFailure) {
        let user = caller.account.name
        guard let (wait, first) = quota.take(for: user) else { return }
        if first {
            audit(event(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: "refused",
                        detail: "more than \(quota.burst) requests in a short time; further ones refused for \(wait.spokenSeconds)"))
            logger.notice("request: \(user) started more than \(quota.burst) requests in a short time; refusing for \(wait.spokenSeconds)")
        }
        throw .canceled("Too many requests. Try again in \(wait.spokenSeconds).")
    }

    /// "Don't Allow": the status becomes denied.
    func deny(_ caller: Caller, member: FamilyControlsMember, actor: String,
              detail: String = "Don't Allow at the alert") throws(GuardFailure) {
        let record = AuthorizationRecord(
            user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: member,
            status: .denied, approvedBy: nil, updatedAt: Date(), appPath: caller.app.directory,
            appIdentity: caller.app.directoryIdentity)
        try commit(record, audit: event(.deny, actor: actor, user: record.user, appID: record.appID,
                                        member: member, outcome: "denied", detail: detail))
        logger.notice("denied: \(record.appID) for \(record.user) by \(actor) (\(detail))")
    }
}

extension SecretBytes {
    /// The bytes, for the answers that are not secrets (the alert, a user name).
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

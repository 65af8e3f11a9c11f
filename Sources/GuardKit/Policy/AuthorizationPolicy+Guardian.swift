import FamilyControlsModel
import FoundationEssentials
import SystemKit
import PAM

// A parent or guardian decides a child's request from their own session:
// `familyctl requests` lists it, `familyctl approve ID` or `deny ID` decides
// it after PAM authenticates them on their own terminal. The guardian's
// secret never passes through a process the child controls.
extension AuthorizationPolicy {
    /// Makes the request pending, tells the app, and waits until a guardian
    /// decides it, the app goes away, or it expires. The guardian's call does
    /// the work (approve and lock, or revoke and unlock); this only reports it.
    /// - Throws: the refusal, cancellation or expiry, as the app should hear it.
    func awaitGuardian(_ purpose: PendingRequest.Purpose, caller: Caller, channel: any RequestChannel) throws(GuardFailure) {
        let user = caller.account.name
        let appID = caller.app.appID
        let timeout = family.configuration.pendingTimeout
        guard let request = pending.add(purpose, for: caller, timeout: timeout) else {
            audit(event(.request, actor: user, user: user, appID: appID, member: .child, outcome: "refused",
                        detail: "too many requests waiting for a parent or guardian"))
            throw GuardFailure(.authorizationConflict, "\(user) already has \(PendingRequests.perUser) requests waiting "
                + "for a parent or guardian; wait for them to be decided")
        }
        defer { pending.remove(request) }
        let what = purpose == .approve ? "approve" : "lift the approval of"
        audit(event(.request, actor: user, user: user, appID: appID, member: .child, outcome: "pending",
                    detail: "request \(request.id): a parent or guardian is asked to \(what) it"))
        logger.notice("request \(request.id): \(appID) for \(user) waits for a parent or guardian "
            + "(familyctl approve \(request.id) or familyctl deny \(request.id))")
        channel.tell(AuthorizationPrompt(kind: .pending, message: "Ask a parent or guardian to \(what) "
            + "“\(caller.app.displayName)” from their own account: request \(request.id). "
            + "They run: familyctl approve \(request.id)   (or: familyctl deny \(request.id))"))

        switch request.wait(while: { !channel.isClosed }) {
        case .approved:
            return
        case .denied(let guardian):
            var failure = GuardFailure.canceled(purpose == .approve
                ? "\(caller.app.displayName) was not allowed to provide parental controls (by \(guardian))"
                : "the approval of \(caller.app.displayName) stays (decided by \(guardian))")
            if purpose == .approve { failure.resultingStatus = .denied }
            throw failure
        case .failed(let failure):
            throw failure
        case .canceled(let reason):
            audit(event(.cancel, actor: user, user: user, appID: appID, member: .child, outcome: "canceled",
                        detail: "request \(request.id): \(reason)"))
            logger.notice("request \(request.id): \(appID) for \(user) canceled: \(reason)")
            throw .canceled("the request was canceled")
        case .expired:
            audit(event(.cancel, actor: user, user: user, appID: appID, member: .child, outcome: "expired",
                        detail: "request \(request.id): no parent or guardian decided within \(timeout.spokenSeconds)"))
            logger.notice("request \(request.id): \(appID) for \(user) expired")
            throw .canceled("no parent or guardian decided within \(timeout.spokenSeconds); ask again")
        }
    }

    /// The requests `requester` may decide: all for root, their children's for a guardian.
    package func pendingRequests(for requester: UserAccount) -> [PendingRequest] {
        pending.all.filter { $0.ending == nil && mayDecide(requester, for: $0.user) }
    }

    /// Runs `watcher` after every change to the requests waiting.
    package func watchPending(_ watcher: @escaping PendingRequests.Watcher) -> Int { pending.watch(watcher) }

    package func unwatchPending(_ token: Int) { pending.unwatch(token) }

    /// `familyctl approve ID` or `deny ID`: PAM authenticates `requester` (not
    /// root) over `channel`, their own connection, then the request is
    /// carried out: approved and locked, denied, or its approval lifted.
    /// - Returns: the authorization as it now is, when there is one.
    /// - Throws: `NotFound` for a request that is not theirs to decide (or
    ///   not waiting), the authentication's failure, or the lock's.
    package func decide(_ id: Int64, approve: Bool, requester: UserAccount,
                        over channel: any RequestChannel) throws(GuardFailure) -> AuthorizationView? {
        guard let request = pending.request(id), request.ending == nil, mayDecide(requester, for: request.user) else {
            throw GuardFailure(.notFound, "no request \(id) is waiting for \(requester.name) to decide")
        }
        if requester.uid != 0 {
            try authenticateGuardian(requester, for: request, over: channel)
        }
        let caller = request.caller
        return try requests.withExclusiveAccess(to: caller.key) { () throws(GuardFailure) -> AuthorizationView? in
            guard request.ending == nil else {
                throw GuardFailure(.notFound, "request \(id) ended while \(requester.name) was authenticating")
            }
            let detail = "request \(id)"
            switch (request.purpose, approve) {
            case (.approve, true):
                let record = AuthorizationRecord(
                    user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: .child,
                    status: .approved, approvedBy: requester.name, updatedAt: Date(), appPath: caller.app.directory,
                    appIdentity: caller.app.directoryIdentity)
                do throws(GuardFailure) {
                    try self.approve(record, directory: caller.directory, audit: event(
                        .approve, actor: requester.name, user: record.user, appID: record.appID, member: .child,
                        outcome: "approved", detail: detail))
                } catch {
                    request.end(.failed(error))
                    throw error
                }
                logger.notice("approved: \(record.appID) for \(record.user) as child by \(requester.name) (\(detail))")
                request.end(.approved(by: requester.name))
                return try view(record)
            case (.approve, false):
                try deny(caller, member: .child, actor: requester.name,
                         detail: "\(detail): Don't Allow from a parent or guardian")
                request.end(.denied(by: requester.name))
                return try authorization(user: caller.account.name, appID: caller.app.appID).map { record throws(GuardFailure) in try view(record) }
            case (.revoke, true):
                try revoke(user: caller.account.name, appID: caller.app.appID, actor: requester.name)
                request.end(.approved(by: requester.name))
                return nil
            case (.revoke, false):
                audit(event(.revoke, actor: requester.name, user: caller.account.name, appID: caller.app.appID,
                            member: .child, outcome: "refused", detail: "\(detail): the approval stays"))
                request.end(.denied(by: requester.name))
                return try authorization(user: caller.account.name, appID: caller.app.appID).map { record throws(GuardFailure) in try view(record) }
            }
        }
    }

    /// Whether `requester` may decide `child`'s requests: root, or a guardian
    /// of the child who is not the child.
    func mayDecide(_ requester: UserAccount, for child: String) -> Bool {
        if requester.uid == 0 { return true }
        guard requester.name != child else { return false }
        return (try? family.isGuardian(requester, of: child)) == true
    }

    /// PAM on the guardian service for the guardian themself, on their own
    /// terminal (through `familyctl`), up to `MaxAttempts` times; failures in
    /// a row slow the next attempts as for a request.
    private func authenticateGuardian(_ guardian: UserAccount, for request: PendingRequest,
                                      over channel: any RequestChannel) throws(GuardFailure) {
        let configuration = family.configuration
        let key = "guardian " + guardian.name
        let child = request.user
        for attempt in 1...configuration.maxAttempts {
            if let wait = backoff.remainingWait(for: key, freeFailures: configuration.maxAttempts,
                                                delay: configuration.failureDelay) {
                let message = "Too many failed attempts. Try again in \(wait.spokenSeconds)."
                channel.tell(AuthorizationPrompt(kind: .error, message: message))
                throw .canceled(message)
            }
            let pam = PAMRequest(service: configuration.guardianService, user: guardian.name, requestingUser: child,
                                 tty: nil, configurationDirectory: settings.pamDirectory,
                                 promptTimeout: configuration.promptTimeout)
            do throws(PAMError) {
                try authenticator.authenticateBlocking(pam, conversation: ChannelConversation(channel: channel))
                backoff.recordSuccess(of: key)
                return
            } catch {
                logger.notice("request \(request.id): \(guardian.name) did not authenticate: \(error)")
                switch error.reason {
                case .canceled, .timedOut:
                    throw .canceled("the authentication was \(error.reason == .timedOut ? "timed out" : "canceled")")
                case .serviceMisconfigured:
                    throw GuardFailure(.unavailable, error.publicMessage)
                default:
                    backoff.recordFailure(of: key)
                    audit(event(.request, actor: guardian.name, user: child, appID: request.appID, member: .child,
                                outcome: "authentication failed", detail: "request \(request.id): \(error.description) (attempt \(attempt))"))
                    if error.reason == .tooManyTries { throw .canceled(error.publicMessage) }
                    if attempt < configuration.maxAttempts {
                        channel.tell(AuthorizationPrompt(kind: .error, message: "Sorry, try again."))
                    }
                }
            }
        }
        throw .canceled("\(configuration.maxAttempts) incorrect authentication attempts")
    }
}

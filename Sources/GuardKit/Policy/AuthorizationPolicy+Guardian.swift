import FamilyControlsModel
import SystemKit

// A parent or guardian decides a child's request from their own session
// (see ``GuardianDesk``).
extension AuthorizationPolicy {
    /// The requests `requester` may decide: all for root, their children's for a guardian.
    package func pendingRequests(for requester: UserAccount) -> [PendingRequest] {
        desk.requests(for: requester)
    }

    /// Runs `watcher` after every change to the requests waiting.
    package func watchPending(_ watcher: @escaping PendingRequests.Watcher) -> Int { desk.pending.watch(watcher) }

    package func unwatchPending(_ token: Int) { desk.pending.unwatch(token) }

    /// `familyctl approve ID` or `deny ID`: PAM authenticates `requester` (not
    /// root) over `channel`, their own connection, then the request is
    /// carried out: approved and locked, denied, or its approval lifted.
    /// - Returns: the authorization as it now is, when there is one.
    /// - Throws: `NotFound` for a request that is not theirs to decide (or
    ///   not waiting), the authentication's failure, or the lock's.
    package func decide(_ id: Int64, approve: Bool, requester: UserAccount,
                        over channel: any RequestChannel) throws(GuardFailure) -> AuthorizationView? {
        let request = try decidableRequest(id, for: requester)
        if requester.uid != 0 {
            try sheet.authenticateGuardian(requester, for: request, over: channel)
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
                    status: .approved, approvedBy: requester.name, updatedAt: .now, appPath: caller.app.directory,
                    appIdentity: caller.app.directoryIdentity)
                do throws(GuardFailure) {
                    try keeper.approve(record, directory: caller.directory, audit: ledger.event(
                        .approve, actor: requester.name, user: record.user, appID: record.appID, member: .child,
                        outcome: .approved, detail: detail))
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
                return try currentView(of: caller)
            case (.revoke, true):
                try revoke(user: caller.account.name, appID: caller.app.appID, actor: requester.name)
                request.end(.approved(by: requester.name))
                return nil
            case (.revoke, false):
                ledger.audit(.revoke, actor: requester.name, user: caller.account.name, appID: caller.app.appID,
                             member: .child, outcome: .refused, detail: "\(detail): the approval stays")
                request.end(.denied(by: requester.name))
                return try currentView(of: caller)
            }
        }
    }

    /// Request `id`, if it waits for `requester` to decide it.
    /// - Throws: `NotFound` for a request that is not theirs to decide, or not waiting.
    package func decidableRequest(_ id: Int64, for requester: UserAccount) throws(GuardFailure) -> PendingRequest {
        guard let request = desk.request(id, for: requester) else {
            throw GuardFailure(.notFound, "no request \(id) is waiting for \(requester.name) to decide")
        }
        return request
    }

    private func currentView(of caller: Caller) throws(GuardFailure) -> AuthorizationView? {
        guard let record = try ledger.authorization(user: caller.account.name, appID: caller.app.appID) else { return nil }
        return try view(record)
    }
}

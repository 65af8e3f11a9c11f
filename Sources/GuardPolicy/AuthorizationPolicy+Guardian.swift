import FamilyControlsModel
import GuardProtocol
import SystemKit
import UpdateSignature
import GuardIdentity
import GuardStore

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
    /// - Parameter minutes: for a `time` request, the minutes to give
    ///   (default: those asked); refused for any other kind.
    package func decide(_ id: Int64, approve: Bool, minutes: Int? = nil, requester: UserAccount, session: TerminalSession?,
                        over channel: any RequestChannel) throws(GuardFailure) -> AuthorizationView? {
        let request = try decidableRequest(id, for: requester)
        guard minutes == nil || (request.purpose == .time && approve) else {
            throw GuardFailure(.familyControls(.invalidArgument), "--minutes is for approving a request for more time; "
                + "request \(id) is not one")
        }
        try authenticate(requester, approve ? .approve : .deny, child: request.user, appID: request.appID,
                         context: "request \(id)", showing: Self.summary(of: request, approve: approve),
                         proof: GuardianProof(session: session, channel: channel))
        let caller = request.caller
        return try turns.save(caller.key) { () throws(GuardFailure) -> AuthorizationView? in
            guard request.ending == nil else {
                throw GuardFailure(.notFound, "request \(id) ended while \(requester.name) was authenticating")
            }
            let detail = "request \(id)"
            if let proposal = request.proposal, request.purpose == .limits || request.purpose == .time {
                do throws(GuardFailure) {
                    if approve { try proposal.approve(requester.name, minutes) } else { proposal.deny(requester.name) }
                } catch {
                    request.end(.failed(error))
                    throw error
                }
                request.end(approve ? .approved(by: requester.name) : .denied(by: requester.name))
                return try currentView(of: caller)
            }
            switch (request.purpose, approve) {
            case (.approve, true):
                var record = AuthorizationRecord(
                    user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: .child,
                    status: .approved, approvedBy: requester.name, updatedAt: .now, appPath: caller.app.directory,
                    appIdentity: caller.app.directoryIdentity, flatpak: caller.app.flatpak,
                    displayName: caller.app.displayName)
                // What the guardian was shown (``summary(of:approve:)``, `familyctl requests`): the key
                // whose signed versions go in without asking, and the version.
                if caller.app.flatpak == nil {
                    record.updateKey = caller.app.updateKey
                    record.highestVersion = UpdateVersion.highest(nil, caller.app.version)
                }
                do throws(GuardFailure) {
                    record = try keeper.approve(record, directory: caller.directory, audit: ledger.event(
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
            case (.update, true):
                guard let update = request.update else {
                    throw .internalError("request \(id) has no staged version to swap in")
                }
                let said = "\(detail): approved by \(requester.name), from \(update.from) to \(update.to)"
                do throws(GuardFailure) {
                    switch update.change {
                    case .staged(let staged):
                        try keeper.swapIn(staged, user: caller.account.name, actor: requester.name, detail: said,
                                          trusting: update.nextKey, version: update.version)
                    case .flatpak(let next, let from):
                        try keeper.letFlatpakUpdateIn(next, from: from, user: caller.account.name, actor: requester.name,
                                                      detail: said)
                    }
                } catch {
                    request.end(.failed(error))
                    throw error
                }
                request.end(.approved(by: requester.name))
                return try currentView(of: caller)
            case (.update, false):
                ledger.audit(.update, actor: requester.name, user: caller.account.name, appID: caller.app.appID,
                             member: .child, outcome: .refused, detail: "\(detail): the approved version stays")
                request.end(.denied(by: requester.name))
                return try currentView(of: caller)
            case (.revoke, false):
                ledger.audit(.revoke, actor: requester.name, user: caller.account.name, appID: caller.app.appID,
                             member: .child, outcome: .refused, detail: "\(detail): the approval stays")
                request.end(.denied(by: requester.name))
                return try currentView(of: caller)
            case (.limits, _), (.time, _):
                throw .internalError("request \(id) has nothing to carry out")
            }
        }
    }

    /// Makes a `limits` or `time` request of `caller` pending, tells the
    /// app, and waits until a guardian decides it (``GuardianDesk``); the
    /// proposal carries out the decision.
    package func awaitGuardian(_ purpose: PendingRequest.Purpose, caller: Caller, proposal: PendingRequest.Proposal,
                               over channel: any RequestChannel) throws(GuardFailure) -> PendingRequest.Outcome {
        try desk.awaitGuardian(purpose, caller: caller, proposal: proposal, channel: channel).outcome
    }

    /// Request `id`, if it waits for `requester` to decide it.
    /// - Throws: `NotFound` for a request that is not theirs to decide, or not waiting.
    package func decidableRequest(_ id: Int64, for requester: UserAccount) throws(GuardFailure) -> PendingRequest {
        guard let request = desk.request(id, for: requester) else {
            throw GuardFailure(.notFound, "no request \(id) is waiting for \(requester.name) to decide")
        }
        return request
    }

    /// What the guardian is about to decide, shown before they are asked:
    /// the request's kind, app, child, folder and when it was asked (in the
    /// machine's time zone, as the guardian's clock shows it).
    static func summary(of request: PendingRequest, approve: Bool) -> String {
        let kind = switch request.purpose {
        case .approve: "approval"
        case .revoke: "revoke"
        case .update: "update"
        case .limits: "time limits"
        case .time: "more time"
        }
        let outcome = switch (request.purpose, approve) {
        case (.limits, true), (.time, true): "grant it: " + (request.proposal?.summary ?? "")
        case (.limits, false): "keep the time limits in force"
        case (.time, false): "give no more time"
        case (.update, true):
            switch request.update?.change {
            case .flatpak: "let this version in: from \(request.update?.from ?? "?") to \(request.update?.to ?? "?"); "
                + "the approval moves to it"
            case .staged, nil: "let the new version in: from \(request.update?.from ?? "?") to \(request.update?.to ?? "?"), "
                + "locked in its place" + (request.update?.keyChangeText.map { "; \($0)" } ?? "")
                + (request.update?.note.map { " (\($0))" } ?? "")
            }
        case (.update, false): "keep the approved version"
        case (.approve, true):
            "approve it: the app's folder will be locked" + (request.caller.app.flatpak != nil ? "" : request.updateKeyConsequence)
        case (.approve, false): "deny it"
        case (.revoke, true): "lift the approval: the app's folder will no longer be protected from deletion"
        case (.revoke, false): "keep the approval"
        }
        var monitor = ""
        if request.purpose == .approve, let command = request.caller.app.monitor {
            monitor = " Its monitor (\(command)) will run as \(request.user) in each of their sessions"
                + (request.caller.app.monitorRequired.map { "; it is required: keeping it down \(MonitorRequirement.spoken($0))" }
                    ?? "") + "."
        }
        return "Request \(request.id) (\(kind)): “\(request.displayName)” (\(request.appID)) for \(request.user), "
            + "folder \(request.path), asked \(request.created.localDescription).\(monitor) You are about to \(outcome)."
    }

    /// Makes sure `requester`, about to change `child`'s protection (`what`),
    /// is the guardian at their own keyboard: PAM on the guardian service over
    /// their own connection, unless they authenticated in the same terminal
    /// session less than `GuardianTimeout` ago. Root is never asked, as with sudo.
    /// - Throws: `PermissionDenied` when they must authenticate and the call
    ///   has no way to ask (made without `more`); the authentication's failure.
    package func authenticate(_ requester: UserAccount, _ action: AuditAction, child: String, appID: String?,
                      context: String, showing what: String, proof: GuardianProof) throws(GuardFailure) {
        guard requester.uid != 0 else { return }
        // Enrolling a code makes a lasting credential: the password is asked every time, and not remembered.
        let timeout = action == .code ? .zero : family.configuration.guardianTimeout
        if action != .code, let session = proof.session, timestamps.covers(session, within: timeout) {
            proof.channel?.tell(AuthorizationPrompt(kind: .info, message: what))
            return
        }
        guard let channel = proof.channel else {
            ledger.audit(action, actor: requester.name, user: child, appID: appID, member: nil, outcome: .refused,
                         detail: "\(context): not authenticated, and the call could not ask for a password")
            throw GuardFailure(.permissionDenied, "\(requester.name) must authenticate before changing \(child.clipped)'s "
                + "protection, and there is no terminal to ask on: run familyctl on a terminal, or give the password "
                + "with --stdin (a Varlink client calls with more); nothing was changed")
        }
        channel.tell(AuthorizationPrompt(kind: .info, message: what))
        _ = try sheet.authenticate(.guardian(requester, child: child, appID: appID, context: context), over: channel)
        if let session = proof.session, timeout > .zero { timestamps.record(session) }
    }

    private func currentView(of caller: Caller) throws(GuardFailure) -> AuthorizationView? {
        guard let record = try ledger.authorization(user: caller.account.name, appID: caller.app.appID) else { return nil }
        return try view(record)
    }
}

/// How a parent or guardian may show, for one verb, that they are the one
/// at their keyboard.
package struct GuardianProof: Sendable {
    /// Their terminal session, from the kernel; nil without a controlling terminal.
    package var session: TerminalSession?
    /// Their own connection, to ask on; nil for a call made without `more`.
    package var channel: (any RequestChannel)?

    package init(session: TerminalSession?, channel: (any RequestChannel)?) {
        self.session = session
        self.channel = channel
    }
}

import FamilyControlsModel
import GuardProtocol
import SystemKit
import GuardFlatpak
import GuardIdentity
import GuardStore

/// Where a child's request waits for a parent or guardian to decide it from
/// their own session: `familyctl requests` lists it, `familyctl approve ID`
/// or `deny ID` decides it. The guardian's secret never passes through a
/// process the child controls.
final class GuardianDesk: Sendable {
    let ledger: AuthorizationLedger
    let families: FamilyState
    let logger: Logger
    let pending: PendingRequests

    init(ledger: AuthorizationLedger, families: FamilyState, limits: GuardLimits, logger: Logger) {
        pending = PendingRequests(perUser: limits.pendingRequestsPerUser, total: limits.pendingRequestsTotal)
        self.ledger = ledger
        self.families = families
        self.logger = logger
    }

    /// Makes the request pending, tells the app, and waits until a guardian
    /// decides it, the app goes away, or it expires (those two audited). The
    /// guardian's call does the work (approve and lock, or revoke and
    /// unlock); this only reports how the request ended.
    /// - Returns: how it ended, and how long it could wait.
    /// - Throws: the refusal when it cannot be made pending (too many waiting, no number).
    func awaitGuardian(_ purpose: PendingRequest.Purpose, caller: Caller, update: PendingRequest.Update? = nil,
                       proposal: PendingRequest.Proposal? = nil, channel: any RequestChannel) throws(GuardFailure) -> (outcome: PendingRequest.Outcome, timeout: Duration) {
        let user = caller.account.name
        let appID = caller.app.appID
        let timeout = families.current.configuration.pendingTimeout
        // Numbered from the store, so a number a guardian saw before a restart
        // never names another request after it.
        var number: Int64?
        if pending.hasRoom(for: user) {
            do throws(StoreError) {
                number = try ledger.store.next(.request)
            } catch {
                logger.error("store: cannot number a request of \(user) for \(appID): \(error)")
                throw .internalError("the Guard could not number the request in its store; see its log")
            }
        }
        // Where a child's per-user Flatpak app comes from, for the guardian to see before it is approved.
        let source = purpose == .approve ? caller.app.flatpak.flatMap {
            UserInstallation.source(of: $0, trusted: FlatpakTrust.remotes(families.current.configuration.flatpakTrustedRemotes))
        } : nil
        guard let number, let request = pending.add(number, purpose, for: caller, update: update, source: source,
                                                    proposal: proposal, timeout: timeout) else {
            ledger.audit(.request, actor: user, user: user, appID: appID, member: .child, outcome: .refused,
                         detail: "too many requests waiting for a parent or guardian")
            throw GuardFailure(.authorizationConflict, "\(user) already has \(pending.perUser) requests waiting "
                + "for a parent or guardian; wait for them to be decided")
        }
        defer { pending.remove(request) }
        let what = switch purpose {
        case .approve: "approve"
        case .revoke: "lift the approval of"
        case .update: "let in the new version of"
        case .limits: "let these time limits be set by"
        case .time: "give more time, as asked by"
        }
        // The audit keeps what the guardian is shown of the update key, as they are shown it.
        let shownKey = switch purpose {
        case .approve: caller.app.flatpak == nil ? caller.app.updateKey.map { "; its update key is \($0.declaration)" } ?? "" : ""
        case .update: (update?.keyChangeText.map { "; \($0)" } ?? "") + (update?.note.map { " (\($0))" } ?? "")
        case .revoke: ""
        case .limits, .time: proposal.map { ": \($0.summary)" } ?? ""
        }
        let action: AuditAction = switch purpose {
        case .limits: .limits
        case .time: .time
        default: .request
        }
        ledger.audit(action, actor: user, user: user, appID: appID, member: .child, outcome: .pending,
                     detail: "request \(request.id): a parent or guardian is asked to \(what) it\(shownKey)")
        logger.notice("request \(request.id): \(appID) for \(user) waits for a parent or guardian "
            + "(familyctl approve \(request.id) or familyctl deny \(request.id))")
        channel.tell(AuthorizationPrompt(kind: .pending, message: "Ask a parent or guardian to \(what) "
            + "“\(caller.app.displayName)” from their own account: request \(request.id). "
            + "They run: familyctl approve \(request.id)   (or: familyctl deny \(request.id))"))

        let outcome = request.wait(unless: channel.hangUp)
        switch outcome {
        case .approved, .denied, .failed:
            break
        case .canceled(let reason):
            ledger.audit(.cancel, actor: user, user: user, appID: appID, member: .child, outcome: .canceled,
                         detail: "request \(request.id): \(reason)")
            logger.notice("request \(request.id): \(appID) for \(user) canceled: \(reason)")
        case .expired:
            ledger.audit(.cancel, actor: user, user: user, appID: appID, member: .child, outcome: .expired,
                         detail: "request \(request.id): no parent or guardian decided within \(timeout.spokenSeconds)")
            logger.notice("request \(request.id): \(appID) for \(user) expired")
        }
        return (outcome, timeout)
    }

    /// The requests `requester` may decide: all for root, their children's for a guardian.
    func requests(for requester: UserAccount) -> [PendingRequest] {
        pending.all.filter { $0.ending == nil && mayDecide(requester, for: $0.user) }
    }

    /// Request `id`, if it is still waiting and `requester` may decide it.
    func request(_ id: Int64, for requester: UserAccount) -> PendingRequest? {
        guard let request = pending.request(id), request.ending == nil, mayDecide(requester, for: request.user) else { return nil }
        return request
    }

    /// Whether `requester` may decide `child`'s requests: root, or a guardian
    /// of the child who is not the child.
    func mayDecide(_ requester: UserAccount, for child: String) -> Bool {
        if requester.uid == 0 { return true }
        guard requester.name != child else { return false }
        return (try? families.current.isGuardian(requester, of: child)) == true
    }
}

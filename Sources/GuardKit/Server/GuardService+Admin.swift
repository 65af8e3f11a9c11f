import FamilyControlsModel
import GuardProtocol
import Synchronization
import SystemKit
import Varlink
import VarlinkServerKit
import GuardIdentity
import GuardPolicy
import GuardStore

/// `SetStatus`, `Revoke` or `Graduate`: the verbs that change a child's protection.
enum ProtectionChange: Sendable {
    case setStatus(Guard.SetStatus.Parameters)
    case revoke(Guard.Revoke.Parameters)
    case graduate(Guard.Graduate.Parameters)

    /// The user whose protection changes.
    var user: String {
        switch self {
        case .setStatus(let parameters): parameters.user
        case .revoke(let parameters): parameters.user
        case .graduate(let parameters): parameters.user
        }
    }
}

extension GuardService {
    // The administrators' methods: root for everything, a guardian for their
    // own children. Each runs where the method table says and replies itself.

    /// `ListAuthorizations`: root's warnings come with the list.
    func listAuthorizations(_ parameters: Guard.ListAuthorizations.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            let views = try policy.list(user: parameters.user, requester: requester)
            let warnings = requester.uid == 0 ? policy.standingWarnings.current : []
            return Guard.ListAuthorizations.Reply(authorizations: views.map(\.wire),
                                                  warnings: warnings.isEmpty ? nil : warnings).object
        }
    }

    /// `ReadAudit`, within ``maximumAuditEvents``.
    func readAudit(_ parameters: Guard.ReadAudit.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            let limit = parameters.limit ?? 1000
            guard (1...GuardService.maximumAuditEvents).contains(limit) else {
                throw GuardFailure(.familyControls(.invalidArgument),
                                   "parameter limit must be a whole number from 1 to \(GuardService.maximumAuditEvents)")
            }
            let events = try policy.auditEvents(user: parameters.user, appID: parameters.app, since: parameters.since,
                                                limit: Int(limit), requester: requester)
            return Guard.ReadAudit.Reply(events: events.map(\.wire)).object
        }
    }

    /// `ListRequests`: the requests the caller may decide.
    func listRequests(_ parameters: Guard.ListRequests.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            Guard.ListRequests.Reply(requests: policy.pendingRequests(for: requester).map(\.wire)).object
        }
    }

    /// `VerifyLocks`: root only.
    func verifyLocks(_ parameters: Guard.VerifyLocks.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            let findings = try policy.keeper.verify(repair: parameters.repair, actor: requester.name)
            return Guard.VerifyLocks.Reply(findings: findings).object
        }
    }

    /// `Forget`: root only; nothing to ask.
    func forget(_ parameters: Guard.Forget.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            Guard.Forget.Reply(removed: try policy.forget(user: parameters.user, requester: requester)).object
        }
    }

    // `SetStatus`, `Revoke` and `Graduate` called without more: nowhere to
    // ask, so only root or a guardian whose session authenticated lately
    // gets through.

    func setStatus(_ parameters: Guard.SetStatus.Parameters, _ served: ServedCall) {
        changeWithoutAsking(.setStatus(parameters), served)
    }

    func revoke(_ parameters: Guard.Revoke.Parameters, _ served: ServedCall) {
        changeWithoutAsking(.revoke(parameters), served)
    }

    func graduate(_ parameters: Guard.Graduate.Parameters, _ served: ServedCall) {
        changeWithoutAsking(.graduate(parameters), served)
    }

    private func changeWithoutAsking(_ change: ProtectionChange, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            let proof = GuardianProof(session: session(of: served.connection, for: requester), channel: nil)
            return try changeProtection(change, requester: requester, proof: proof)
        }
    }

    // The same called with more, on a decision thread: a guardian may be
    // asked to authenticate over the connection.

    func administrator(_ parameters: Guard.SetStatus.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        administrator(of: .setStatus(parameters), served.connection)
    }

    func administrator(_ parameters: Guard.Revoke.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        administrator(of: .revoke(parameters), served.connection)
    }

    func administrator(_ parameters: Guard.Graduate.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        administrator(of: .graduate(parameters), served.connection)
    }

    func setStatus(_ parameters: Guard.SetStatus.Parameters, _ requester: Administrator,
                   _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.SetStatus.Reply {
        try setStatus(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    func revoke(_ parameters: Guard.Revoke.Parameters, _ requester: Administrator,
                _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.Revoke.Reply {
        try revoke(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    func graduate(_ parameters: Guard.Graduate.Parameters, _ requester: Administrator,
                  _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.Graduate.Reply {
        try graduate(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    /// Replies with what `body` makes for the person calling, or with the failure.
    func respond(_ served: ServedCall, _ body: (UserAccount) throws(GuardFailure) -> JSONObject) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            try body(try requester(served.connection))
        }
    }

    /// `SetStatus`, `Revoke` and `Graduate`: the verbs that change a child's
    /// protection, which a guardian authenticates for (see ``GuardianProof``).
    func changeProtection(_ change: ProtectionChange, requester: UserAccount,
                          proof: GuardianProof) throws(GuardFailure) -> JSONObject {
        switch change {
        case .setStatus(let parameters): try setStatus(parameters, requester: requester, proof: proof).object
        case .revoke(let parameters): try revoke(parameters, requester: requester, proof: proof).object
        case .graduate(let parameters): try graduate(parameters, requester: requester, proof: proof).object
        }
    }

    func setStatus(_ parameters: Guard.SetStatus.Parameters, requester: UserAccount,
                   proof: GuardianProof) throws(GuardFailure) -> Guard.SetStatus.Reply {
        let value = AuthorizationStatus(parameters.status)
        guard value == .approved || value == .denied else {
            throw GuardFailure(.familyControls(.invalidArgument), "status must be approved or denied, found \"\(value)\"")
        }
        let view = try policy.set(user: parameters.user, appID: parameters.app, to: value, requester: requester, proof: proof)
        return Guard.SetStatus.Reply(authorization: view.wire)
    }

    func revoke(_ parameters: Guard.Revoke.Parameters, requester: UserAccount,
                proof: GuardianProof) throws(GuardFailure) -> Guard.Revoke.Reply {
        try policy.revoke(user: parameters.user, appID: parameters.app, requester: requester, proof: proof)
        return Guard.Revoke.Reply()
    }

    func graduate(_ parameters: Guard.Graduate.Parameters, requester: UserAccount,
                  proof: GuardianProof) throws(GuardFailure) -> Guard.Graduate.Reply {
        Guard.Graduate.Reply(revoked: try policy.graduate(user: parameters.user, requester: requester, proof: proof))
    }

    /// The terminal session `requester` calls from, from the kernel (root
    /// needs none); nil without a controlling terminal or a pidfd.
    func session(of connection: VarlinkConnection, for requester: UserAccount) -> TerminalSession? {
        let peer = connection.peer
        guard requester.uid != 0, let pidfd = peer.pidfd?.rawValue else { return nil }
        return TerminalSession.of(pid: peer.pid, pidfd: pidfd, uid: peer.uid)
    }

    func requester(_ connection: VarlinkConnection) throws(GuardFailure) -> UserAccount {
        let uid = connection.peer.uid
        if uid == 0 { return UserAccount(name: "root", uid: 0, gid: 0, home: "/root", shell: "") }
        guard let account = try? UserDatabase.user(id: uid) else {
            throw GuardFailure(.permissionDenied, "uid \(uid) has no account in the user directory")
        }
        return account
    }
}

/// A person calling an administrator's method (a guardian's `familyctl`,
/// or root), and the terminal session they call from.
struct Administrator: Sendable {
    var account: UserAccount
    var session: TerminalSession?

    /// The proof of who they are, asked for over `channel` if need be.
    func proof(over channel: VarlinkRequestChannel) -> GuardianProof {
        GuardianProof(session: session, channel: channel)
    }
}

extension GuardService {
    /// The most audit events one `ReadAudit` returns: a reply stays well
    /// under the client's frame bound.
    package static let maximumAuditEvents: Int64 = 2000
}

extension AuditEvent {
    /// The event as `ReadAudit` sends it: the stored words as the
    /// interface's enums, an unenforced lock's reason and the words of an
    /// action or outcome the interface does not name moved into the detail.
    var wire: Guard.AuditEvent {
        var notes: [String] = []
        let action = Guard.AuditAction(rawValue: self.action.rawValue) ?? .other
        if action == .other { notes.append("action \(self.action.rawValue)") }
        let outcome: Guard.AuditOutcome
        if let named = Guard.AuditOutcome(rawValue: Self.camelCase(self.outcome.rawValue)), named != .other {
            outcome = named
        } else if self.outcome.rawValue.hasPrefix("unenforced: ") {
            outcome = .unenforced
            notes.append(String(self.outcome.rawValue.dropFirst("unenforced: ".count)))
        } else {
            outcome = .other
            notes.append("outcome \(self.outcome.rawValue)")
        }
        let detail = notes.isEmpty ? self.detail : (notes + [self.detail].compactMap { $0 }).joined(separator: "; ")
        return Guard.AuditEvent(id: id ?? 0, at: atSeconds, actor: actor, action: action, user: user, app: appID,
                                member: member.map(Guard.Member.init), outcome: outcome, detail: detail,
                                count: Int64(count), lastAt: lastAt?.seconds)
    }

    /// The stored words as one identifier: `no effect` → `noEffect`.
    static func camelCase(_ words: String) -> String {
        let parts = words.split(separator: " ")
        guard let first = parts.first else { return "" }
        return String(first) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}

extension GuardService {
    /// Who calls a method that streams, within the connection's bound of
    /// streams; nil once the caller has been told why not.
    func streamRequester(_ served: ServedCall) -> UserAccount? {
        let requester: UserAccount
        do throws(GuardFailure) {
            requester = try self.requester(served.connection)
        } catch {
            fail(served.connection, error)
            return nil
        }
        let limit = policy.limits.subscriptionsPerConnection
        guard served.session.subscriptionCount < limit else {
            fail(served.connection, GuardFailure(.limitReached, "this connection already follows \(limit) streams, its limit"))
            return nil
        }
        return requester
    }

    /// `WatchRequests`: the requests the caller may decide now, then again
    /// after every change, within the connection's bound of streams.
    func watchRequests(_ parameters: Guard.WatchRequests.Parameters, _ served: ServedCall) {
        let (connection, session) = (served.connection, served.session)
        guard let requester = streamRequester(served) else { return }
        // Each reply is the whole list as it is when sent, under one lock, so
        // the last one a watcher gets is never older than the last change.
        let sending = Mutex(())
        let send: @Sendable () -> Void = { [policy] in
            sending.withLock { _ in
                let requests = policy.pendingRequests(for: requester).map(\.wire)
                connection.reply(Guard.WatchRequests.Reply(requests: requests).object, continues: true)
            }
        }
        let token = policy.watchPending(send)
        guard session.keepSubscription({ [policy] in policy.unwatchPending(token) }) else { return }
        send()
    }
}

extension PendingRequest {
    /// The `Request` type of the interface.
    var wire: Guard.Request {
        let purpose: Guard.Purpose = switch self.purpose {
        case .approve: .approve
        case .revoke: .revoke
        case .update: .update
        case .limits: .limits
        case .time: .time
        }
        let updateKey: String? = switch self.purpose {
        case .approve: caller.app.flatpak == nil ? caller.app.updateKey?.declaration : nil
        case .update: update?.keyChange?.to?.declaration
        case .revoke, .limits, .time: nil
        }
        return Guard.Request(id: id, user: user, app: appID, name: displayName, path: path, purpose: purpose,
                             created: created.seconds, expires: expires.seconds, from: update?.from, to: update?.to ?? source,
                             updateKey: updateKey, formerUpdateKey: update?.keyChange?.from?.declaration,
                             note: update?.note, limits: proposal?.limits, minutes: proposal?.minutes.map(Int64.init),
                             reason: proposal?.reason)
    }
}

extension ShownLock {
    /// The `LockState` of the interface.
    var wire: Guard.LockState {
        switch self {
        case .journaled(.locked): .locked
        case .journaled(.unlocked): .unlocked
        case .journaled(.locking): .locking
        case .journaled(.unlocking): .unlocking
        case .journaled(.unenforced): .unenforced
        case .notNeeded: .notNeeded
        case .missing: .missing
        }
    }

    /// Why an unenforced lock does not hold.
    var reason: String? {
        if case .journaled(.unenforced(let reason)) = self { return reason }
        return nil
    }
}

extension AuthorizationView {
    /// The `Authorization` type of the interface.
    var wire: Guard.Authorization {
        Guard.Authorization(user: record.user, app: record.appID, name: record.displayName, member: Guard.Member(record.member),
                            status: Guard.Status(record.status), approvedBy: record.approvedBy,
                            updatedAt: record.updatedAt.seconds, path: path, lock: lock.wire, lockReason: lock.reason,
                            flatpak: record.flatpak.map { deployment in
                                Guard.FlatpakApp(id: deployment.appID,
                                                 installation: record.flatpakOrigin != nil ? .familycontrols
                                                     : deployment.installation.kind == .system ? .system : .user,
                                                 arch: deployment.arch, branch: deployment.branch,
                                                 commit: deployment.commit, deployment: deployment.path)
                            })
    }
}


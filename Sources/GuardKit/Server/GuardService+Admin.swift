import FamilyControlsModel
import Synchronization
import SystemKit
import Varlink
import VarlinkServerKit

extension GuardService {
    /// The administrators' methods: root for everything, a guardian for their own children.
    func handleAdmin(_ call: VarlinkCall, on connection: VarlinkConnection) {
        respond(call, on: connection) { () throws(GuardFailure) -> JSONObject in
            let requester = try self.requester(connection)
            let parameters = call.parameters
            func string(_ name: String) throws(GuardFailure) -> String { try stringParameter(name, of: call) }
            switch call.memberName {
            case "ListAuthorizations":
                let user = parameters["user"]
                guard user == nil || user?.isNull == true || user?.stringValue != nil else {
                    throw GuardFailure(.familyControls(.invalidArgument), "parameter user must be a string or null")
                }
                let views = try policy.list(user: user?.stringValue, requester: requester)
                var reply: JSONObject = ["authorizations": .array(views.map { .object($0.json) })]
                let warnings = requester.uid == 0 ? policy.standingWarnings.current : []
                if !warnings.isEmpty { reply["warnings"] = .array(warnings.map { .string($0) }) }
                return reply
            case "SetStatus", "Revoke", "Graduate":
                // Called without more: nowhere to ask, so only root or a
                // guardian whose session authenticated lately gets through.
                let proof = GuardianProof(session: session(of: connection, for: requester), channel: nil)
                return try changeProtection(call, requester: requester, proof: proof)
            case "ReadAudit":
                func optional(_ name: String) throws(GuardFailure) -> JSONValue? {
                    switch parameters[name] {
                    case nil, .null?: return nil
                    case let value?: return value
                    }
                }
                let user = try optional("user")
                let app = try optional("app")
                guard user == nil || user?.stringValue != nil, app == nil || app?.stringValue != nil else {
                    throw GuardFailure(.familyControls(.invalidArgument), "parameters user and app must be strings or null")
                }
                let since: Double?
                switch try optional("since") {
                case nil: since = nil
                case .int(let seconds)?: since = Double(seconds)
                case .double(let seconds)? where seconds.isFinite: since = seconds
                case _?: throw GuardFailure(.familyControls(.invalidArgument), "parameter since must be a number of Unix seconds")
                }
                let limit: Int
                switch try optional("limit") {
                case nil: limit = 1000
                case .int(let value)? where (1...GuardService.maximumAuditEvents).contains(value): limit = Int(value)
                case _?: throw GuardFailure(.familyControls(.invalidArgument),
                                            "parameter limit must be a whole number from 1 to \(GuardService.maximumAuditEvents)")
                }
                let events = try policy.auditEvents(user: user?.stringValue, appID: app?.stringValue, since: since,
                                                    limit: limit, requester: requester)
                return ["events": .array(events.map { .object($0.json) })]
            case "ListRequests":
                return ["requests": .array(policy.pendingRequests(for: requester).map { .object($0.json) })]
            case "VerifyLocks":
                guard requester.uid == 0 else { throw GuardFailure(.permissionDenied, "only root may verify locks") }
                guard let repair = parameters["repair"]?.boolValue else {
                    throw GuardFailure(.familyControls(.invalidArgument), "parameter repair must be a boolean")
                }
                let findings = try policy.keeper.verify(repair: repair, actor: requester.name)
                return ["findings": .array(findings.map { .string($0) })]
            default:
                throw GuardFailure(.familyControls(.invalidArgument), "unknown method \(call.method.clipped)")
            }
        }
    }

    /// `SetStatus`, `Revoke` and `Graduate`: the verbs that change a child's
    /// protection, which a guardian authenticates for (see ``GuardianProof``).
    func changeProtection(_ call: VarlinkCall, requester: UserAccount,
                          proof: GuardianProof) throws(GuardFailure) -> JSONObject {
        func string(_ name: String) throws(GuardFailure) -> String { try stringParameter(name, of: call) }
        switch call.memberName {
        case "SetStatus":
            let status = try string("status")
            guard let value = AuthorizationStatus(name: status), value == .approved || value == .denied else {
                throw GuardFailure(.familyControls(.invalidArgument), "status must be approved or denied, found \"\(status.clipped)\"")
            }
            let view = try policy.set(user: try string("user"), appID: try string("app"), to: value, requester: requester,
                                      proof: proof)
            return ["authorization": .object(view.json)]
        case "Revoke":
            try policy.revoke(user: try string("user"), appID: try string("app"), requester: requester, proof: proof)
            return [:]
        default:
            let revoked = try policy.graduate(user: try string("user"), requester: requester, proof: proof)
            return ["revoked": .array(revoked.map { .string($0) })]
        }
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
}

extension GuardService {
    /// The most audit events one `ReadAudit` returns: a reply stays well
    /// under the client's frame bound.
    package static let maximumAuditEvents: Int64 = 2000
}

extension AuditEvent {
    /// The event as `ReadAudit` sends it.
    var json: JSONObject {
        [
            "id": .int(id ?? 0), "at": .double(atSeconds), "actor": .string(actor), "action": .string(action.rawValue),
            "user": .string(user), "app": appID.map { .string($0) } ?? .null,
            "member": member.map { .string($0.description) } ?? .null, "outcome": .string(outcome.rawValue),
            "detail": detail.map { .string($0) } ?? .null, "count": .int(Int64(count)),
            "lastAt": lastAt.map { .double($0.seconds) } ?? .null,
        ]
    }
}

extension GuardService {
    /// `WatchRequests`: the requests the caller may decide now, then again
    /// after every change, within the connection's bound of streams.
    func watchRequests(session: ConnectionSession, on connection: VarlinkConnection) {
        let requester: UserAccount
        do throws(GuardFailure) {
            requester = try self.requester(connection)
        } catch {
            return fail(connection, error)
        }
        let limit = policy.limits.subscriptionsPerConnection
        guard session.subscriptionCount < limit else {
            return fail(connection, GuardFailure(.limitReached, "this connection already follows \(limit) streams, its limit"))
        }
        // Each reply is the whole list as it is when sent, under one lock, so
        // the last one a watcher gets is never older than the last change.
        let sending = Mutex(())
        let send: @Sendable () -> Void = { [policy] in
            sending.withLock { _ in
                let requests = policy.pendingRequests(for: requester).map { JSONValue.object($0.json) }
                connection.reply(["requests": .array(requests)], continues: true)
            }
        }
        let token = policy.watchPending(send)
        guard session.keepSubscription({ [policy] in policy.unwatchPending(token) }) else { return }
        send()
    }
}

extension PendingRequest {
    /// The `Request` type of the interface.
    var json: JSONObject {
        [
            "id": .int(id),
            "user": .string(user),
            "app": .string(appID),
            "name": .string(displayName),
            "path": .string(path),
            "purpose": .string(purpose.rawValue),
            "created": .double(created.seconds),
            "expires": .double(expires.seconds),
        ]
    }
}

extension AuthorizationView {
    /// The `Authorization` type of the interface.
    var json: JSONObject {
        [
            "user": .string(record.user),
            "app": .string(record.appID),
            "member": .string(record.member.description),
            "status": .string(record.status.description),
            "approvedBy": record.approvedBy.map { .string($0) } ?? .null,
            "updatedAt": .double(record.updatedAt.seconds),
            "path": .string(path),
            "lock": .string(lock),
        ]
    }
}

/// Parameter `name` of `call`, which must be a string.
private func stringParameter(_ name: String, of call: VarlinkCall) throws(GuardFailure) -> String {
    guard let value = call.parameters[name]?.stringValue else {
        throw GuardFailure(.familyControls(.invalidArgument), "parameter \(name) must be a string")
    }
    return value
}

import FamilyControlsModel
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Varlink
import VarlinkServerKit

/// The Guard's Varlink interface (`org.familycontrols.guard`): decodes calls,
/// works out who is calling from the kernel, and hands the decision to
/// ``AuthorizationPolicy``.
package final class GuardService: VarlinkService {
    let policy: AuthorizationPolicy
    let identifier = AppIdentifier()
    let logger: Logger
    package let interfaces: [VarlinkInterfaceDescription]
    /// Parameters whose values are secrets: the answer to a password prompt.
    /// The server hands them over as bytes and zeroes what it read.
    package static let secretParameters: Set<String> = ["response"]

    /// Short blocking work: identifying callers, admin calls, locks, reconcile.
    package let work: BlockingExecutor
    /// Apps' requests that wait for people (the alert, a PAM conversation,
    /// a guardian's decision), for minutes maybe. Kept apart so people taking
    /// their time never delay identification; bounded by the requests that
    /// may wait at once (``GuardLimits/pendingRequestsTotal`` plus in-session conversations).
    let conversations: BlockingExecutor
    /// Guardians' and root's decisions (`DecideRequest`), apart from the apps'
    /// requests: however many callers hold requests open, a guardian can decide.
    let decisions: BlockingExecutor
    /// Each user's conversations under way, requests and decisions together.
    let perUser: ConversationsPerUser

    /// The pools and the per-user bound are sized by the policy's ``GuardLimits``.
    package init(policy: AuthorizationPolicy, logger: Logger = Logger(label: "guard")) throws {
        self.policy = policy
        self.logger = logger
        let limits = policy.limits
        // Each connection queues at most one job here (its lane's), so the
        // server's bound on connections is the one reached first.
        work = BlockingExecutor(name: "guard-work", maximumThreads: limits.workThreads, maximumQueued: 1 << 16)
        conversations = BlockingExecutor(name: "guard-talk", maximumThreads: limits.conversationThreads, maximumQueued: 0)
        decisions = BlockingExecutor(name: "guard-decide", maximumThreads: limits.decisionThreads, maximumQueued: 0)
        perUser = ConversationsPerUser(limit: limits.conversationsPerUser)
        interfaces = [try VarlinkInterfaceDescription(GuardInterface.text)]
    }

    package func handle(_ call: VarlinkCall, on connection: VarlinkConnection) {
        let session = ConnectionSession.of(connection, on: work)
        switch call.memberName {
        case "GetStatus":
            // The hot path: answered on the loop thread once the caller is known.
            if session.isIdle, case .success(let caller)? = session.cachedCaller {
                replyStatus(caller, to: call, on: connection)
            } else {
                session.enqueue(on: connection) { [self] in
                    guard let caller = identify(connection, session) else { return }
                    replyStatus(caller, to: call, on: connection)
                }
            }
        case "Answer":
            answer(call, session: session, on: connection)
        case "Subscribe":
            guard call.more else { return connection.fail(.expectedMore) }
            session.enqueue(on: connection) { [self] in
                guard let caller = identify(connection, session) else { return }
                subscribe(caller, session: session, on: connection)
            }
        case "RequestAuthorization":
            guard let name = call.parameters["member"]?.stringValue, let member = FamilyControlsMember(name: name) else {
                return connection.fail(.invalidParameter("member"))
            }
            startConversation(call, session: session, on: connection, who: applicant(member, connection, session),
                              on: conversations) { [policy] caller, channel throws(GuardFailure) in
                let status = try policy.request(member, from: caller, over: channel)
                return ["status": .string(status.description)]
            }
        case "RevokeAuthorization":
            startConversation(call, session: session, on: connection, who: app(connection, session),
                              on: conversations) { [policy] caller, channel throws(GuardFailure) in
                try policy.revoke(from: caller, over: channel)
                return [:]
            }
        case "DecideRequest":
            guard let id = call.parameters["id"]?.intValue else { return connection.fail(.invalidParameter("id")) }
            guard let approve = call.parameters["approve"]?.boolValue else { return connection.fail(.invalidParameter("approve")) }
            startConversation(call, session: session, on: connection, who: decider(of: id, connection),
                              on: decisions) { [policy] requester, channel throws(GuardFailure) in
                let view = try policy.decide(id, approve: approve, requester: requester.account, session: requester.session,
                                             over: channel)
                return ["authorization": view.map { .object($0.json) } ?? .null]
            }
        case "SetStatus", "Revoke", "Graduate":
            // With more, a guardian may be asked to authenticate over this connection.
            guard call.more else { return session.enqueue(on: connection) { [self] in handleAdmin(call, on: connection) } }
            startConversation(call, session: session, on: connection, who: administrator(of: call, connection),
                              on: decisions) { [self] requester, channel throws(GuardFailure) in
                try changeProtection(call, requester: requester.account,
                                     proof: GuardianProof(session: requester.session, channel: channel))
            }
        case "WatchRequests":
            guard call.more else { return connection.fail(.expectedMore) }
            session.enqueue(on: connection) { [self] in watchRequests(session: session, on: connection) }
        default:
            session.enqueue(on: connection) { [self] in handleAdmin(call, on: connection) }
        }
    }

    // MARK: Apps

    private func replyStatus(_ caller: Caller, to call: VarlinkCall, on connection: VarlinkConnection) {
        guard call.expectsReply else { return }
        connection.reply([
            "app": .string(caller.app.appID),
            "user": .string(caller.account.name),
            "status": .string(policy.ledger.status(user: caller.account.name, appID: caller.app.appID,
                                            directory: caller.app.directoryIdentity).description),
        ])
    }

    /// Follows the caller's status on this connection, within its bound of
    /// subscriptions. Runs on the session's queue, so the count checked is the
    /// count kept.
    private func subscribe(_ caller: Caller, session: ConnectionSession, on connection: VarlinkConnection) {
        let limit = policy.limits.subscriptionsPerConnection
        guard session.subscriptionCount < limit else {
            return fail(connection, GuardFailure(.limitReached,
                "this connection already follows the status \(limit) times, its limit; one Subscribe per app is enough"))
        }
        // Every reply reads the status as it is sent, under one lock, so the last
        // reply the app gets is never older than the last change.
        let sending = Mutex(())
        let send: @Sendable () -> Void = { [policy] in
            sending.withLock { _ in
                let status = policy.ledger.status(user: caller.account.name, appID: caller.app.appID,
                                           directory: caller.app.directoryIdentity)
                connection.reply(["status": .string(status.description)], continues: true)
            }
        }
        let token = policy.ledger.subscribe(user: caller.account.name, appID: caller.app.appID) { _ in send() }
        guard session.keepSubscription({ [policy] in policy.ledger.unsubscribe(token) }) else { return }
        send()
    }

    /// The app calling on `connection`, worked out afresh.
    private func app(_ connection: VarlinkConnection, _ session: ConnectionSession) -> @Sendable () -> Result<Caller, GuardFailure> {
        { [self] in caller(of: connection, session, fresh: true) }
    }

    /// The app calling on `connection`, worked out afresh, if it may ask as
    /// `member` at all: someone who is no one's child asking as a child is
    /// refused here, before a conversation starts.
    private func applicant(_ member: FamilyControlsMember, _ connection: VarlinkConnection,
                           _ session: ConnectionSession) -> @Sendable () -> Result<Caller, GuardFailure> {
        { [self] in
            caller(of: connection, session, fresh: true).flatMap { caller in
                do throws(GuardFailure) {
                    try policy.admit(member, from: caller)
                    return .success(caller)
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// The person calling on `connection` (a guardian's `familyctl`, or
    /// root), if request `id` waits for them to decide it: anyone else is
    /// refused here, before a decision takes a thread.
    private func decider(of id: Int64, _ connection: VarlinkConnection) -> @Sendable () -> Result<Administrator, GuardFailure> {
        { [self] in
            do throws(GuardFailure) {
                let account = try requester(connection)
                _ = try policy.decidableRequest(id, for: account)
                return .success(Administrator(account: account, session: session(of: connection, for: account)))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The person calling on `connection` with `call` (SetStatus, Revoke,
    /// Graduate), if they may change the user it names at all: anyone else
    /// is refused here, before the call takes a decision thread.
    private func administrator(of call: VarlinkCall, _ connection: VarlinkConnection) -> @Sendable () -> Result<Administrator, GuardFailure> {
        let user = call.parameters["user"]?.stringValue
        let graduating = call.memberName == "Graduate"
        return { [self] in
            do throws(GuardFailure) {
                let account = try requester(connection)
                if account.uid != 0 {
                    guard !graduating else { throw GuardFailure(.permissionDenied, "only root may graduate a child") }
                    guard let user, policy.may(account, administer: user) else {
                        let name = (user ?? "").clipped
                        let verb = call.memberName == "Revoke" ? "revoke" : "change"
                        throw GuardFailure(.permissionDenied, "only root or a guardian of \(name) may \(verb) \(name)'s authorizations")
                    }
                }
                return .success(Administrator(account: account, session: session(of: connection, for: account)))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Runs a call that may prompt (a request, a revoke that needs a guardian,
    /// a guardian's decision) on `pool`: PAM waits for people. Prompts go out
    /// as `continues` replies, answered with `Answer` calls; `body`'s
    /// parameters are the last reply. `who` says who is calling; each user
    /// has at most ``GuardLimits/conversationsPerUser`` under way.
    private func startConversation<Who: ConversationStarter>(
        _ call: VarlinkCall, session: ConnectionSession, on connection: VarlinkConnection,
        who: @escaping @Sendable () -> Result<Who, GuardFailure>, on pool: BlockingExecutor,
        _ body: @escaping @Sendable (Who, VarlinkRequestChannel) throws(GuardFailure) -> JSONObject
    ) {
        guard call.more else { return connection.fail(.expectedMore) }
        let channel = VarlinkRequestChannel(connection: connection)
        // The session closes the channel if the connection closes.
        guard session.beginRequest(channel) else {
            return fail(connection, GuardFailure(.authorizationConflict, "a request is already in progress on this connection"))
        }
        session.enqueue(on: connection) { [self] in
            let caller: Who
            switch who() {
            case .success(let identified):
                caller = identified
            case .failure(let failure):
                // Free the connection for the next call before the client hears the refusal.
                session.endRequest()
                return fail(connection, failure)
            }
            let account = caller.account
            if case .refused(let first) = perUser.enter(account.uid) {
                if first {
                    logger.notice("request refused: \(account.name) already has \(perUser.limit) conversations under way, "
                        + "the most one user may have; refusing more until one ends")
                }
                channel.close()
                session.endRequest()
                return fail(connection, .busy("\(account.name) already has \(perUser.limit) requests under way, "
                    + "the most one user may have at once; finish or cancel one first"))
            }
            let run: @Sendable () -> Void = { [self] in
                let outcome: Result<JSONObject, GuardFailure>
                do throws(GuardFailure) {
                    outcome = .success(try body(caller, channel))
                } catch {
                    outcome = .failure(error)
                }
                // Free the user's place and the connection for the next call
                // before the client hears the end.
                perUser.leave(account.uid)
                channel.close()
                session.endRequest()
                switch outcome {
                case .success(let parameters): connection.reply(parameters)
                case .failure(let failure): fail(connection, failure)
                }
            }
            do throws(BlockingExecutor.Saturated) {
                try pool.submit(run)
            } catch {
                logger.warning("request refused: \(error)")
                perUser.leave(account.uid)
                channel.close()
                session.endRequest()
                fail(connection, .busy)
            }
        }
    }

    private func answer(_ call: VarlinkCall, session: ConnectionSession, on connection: VarlinkConnection) {
        guard let id = call.parameters["id"]?.intValue else {
            if call.expectsReply { connection.fail(.invalidParameter("id")) }
            return
        }
        // The server parses `response` as a secret (``secretParameters``); a
        // plain string, from a server set up without that, is taken as one too.
        let response: SecretBytes?
        switch call.parameters["response"] {
        case nil, .null?: response = nil
        case .secret(let secret)?: response = secret
        case .string(let text)?: response = SecretBytes(text)
        case _?:
            if call.expectsReply { connection.fail(.invalidParameter("response")) }
            return
        }
        session.activeChannel?.deliver(id: id, response: response)
        if call.expectsReply { connection.reply() }
    }

    // MARK: Helpers

    /// Who is calling, from the kernel: the peer's uid and pid (pinned by its
    /// pidfd) and the executable it runs. Replies with the error and returns nil
    /// when the process is not a managed app.
    func identify(_ connection: VarlinkConnection, _ session: ConnectionSession, fresh: Bool = false) -> Caller? {
        switch caller(of: connection, session, fresh: fresh) {
        case .success(let caller):
            return caller
        case .failure(let failure):
            fail(connection, failure)
            return nil
        }
    }

    /// The caller, worked out once per connection (again when `fresh`); a
    /// refusal is logged when it is worked out.
    private func caller(of connection: VarlinkConnection, _ session: ConnectionSession,
                        fresh: Bool) -> Result<Caller, GuardFailure> {
        if !fresh, let known = session.cachedCaller { return known }
        let result = resolveCaller(connection.peer)
        session.remember(result)
        if case .failure(let failure) = result { logger.notice("refused \(connection.peer): \(failure.message)") }
        return result
    }

    private func resolveCaller(_ peer: VarlinkPeer) -> Result<Caller, GuardFailure> {
        let account: UserAccount
        do throws(Errno) {
            guard let found = try UserDatabase.user(id: peer.uid) else {
                return .failure(GuardFailure(.invalidAccountType, "uid \(peer.uid) has no account in the user directory"))
            }
            account = found
        } catch {
            return .failure(GuardFailure(.networkError, "the user directory could not be reached: \(error)"))
        }
        do throws(IdentityError) {
            // Kernels before 6.5 give no SO_PEERPIDFD: pin the process now, and the
            // uid check inside catches a pid recycled in between.
            let opened = peer.pidfd == nil ? ProcessHandle.open(pid: peer.pid) : nil
            let (app, directory) = try identifier.identify(pid: peer.pid, pidfd: peer.pidfd?.rawValue ?? opened?.rawValue,
                                                           uid: peer.uid, roots: policy.family.appRoots(for: account))
            return .success(Caller(account: account, app: app, directory: directory))
        } catch {
            if case .processGone = error { return .failure(GuardFailure(.unavailable, error.description)) }
            return .failure(GuardFailure(.invalidArgument, error.description))
        }
    }

    /// Runs `body` and replies with its parameters, or with its failure.
    func respond(_ call: VarlinkCall, on connection: VarlinkConnection,
                 _ body: () throws(GuardFailure) -> JSONObject) {
        do throws(GuardFailure) {
            let parameters = try body()
            if call.expectsReply { connection.reply(parameters) }
        } catch {
            if call.expectsReply { fail(connection, error) }
        }
    }

    func fail(_ connection: VarlinkConnection, _ failure: GuardFailure) {
        Self.fail(connection, failure)
    }

    static func fail(_ connection: VarlinkConnection, _ failure: GuardFailure) {
        var parameters: JSONObject = ["message": .string(failure.message)]
        if let status = failure.resultingStatus { parameters["status"] = .string(status.description) }
        connection.fail(failure.varlinkName, parameters: parameters)
    }
}

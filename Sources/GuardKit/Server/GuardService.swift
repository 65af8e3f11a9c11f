import FamilyControlsModel
import GuardProtocol
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Varlink
import VarlinkServerKit
import GuardIdentity
import GuardPolicy
import GuardSessions
import GuardTime
import GuardTimeLimits

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
    package static let secretParameters = Guard.secretFields

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
    /// The login sessions the PAM session module told of.
    package let sessions = LoginSessions()
    /// The approved apps' monitors, run in the children's sessions.
    package let monitors = MonitorKeeper()
    /// The children's session time: counted, written for the PAM module, kept.
    package let time = TimeKeeper()
    /// The time limits apps set for their children, and more time from guardians.
    package let timeLimits: ChildLimitsPolicy

    /// The pools and the per-user bound are sized by the policy's ``GuardLimits``.
    package init(policy: AuthorizationPolicy, logger: Logger = Logger(label: "guard")) throws {
        self.policy = policy
        self.logger = logger
        timeLimits = ChildLimitsPolicy(policy: policy)
        let limits = policy.limits
        // Each connection queues at most one job here (its lane's), so the
        // server's bound on connections is the one reached first.
        work = BlockingExecutor(name: "guard-work", maximumThreads: limits.workThreads, maximumQueued: 1 << 16)
        conversations = BlockingExecutor(name: "guard-talk", maximumThreads: limits.conversationThreads, maximumQueued: 0)
        decisions = BlockingExecutor(name: "guard-decide", maximumThreads: limits.decisionThreads, maximumQueued: 0)
        perUser = ConversationsPerUser(limit: limits.conversationsPerUser)
        interfaces = [try VarlinkInterfaceDescription(GuardInterface.text)]
    }

    /// Looks the call's method up in ``methods`` and serves it there: its
    /// parameters and `more` checked against the interface on the loop
    /// thread, then its handler run where the table says.
    package func handle(_ call: VarlinkCall, on connection: VarlinkConnection) {
        let session = ConnectionSession.of(connection, on: work)
        guard let method = Self.methods[call.memberName] else {
            if call.expectsReply { connection.fail(.methodNotFound(call.method)) }
            return
        }
        method.serve(self, ServedCall(call: call, connection: connection, session: session))
    }

    /// `call`'s parameters checked against the interface, as sd-varlink
    /// checks them before dispatch: every field of the type the interface
    /// gives and no other, and `more` set if the method requires it. Nil
    /// once the caller has been told (`InvalidParameter` naming the field,
    /// or `ExpectedMore`).
    func accept<Method: GuardMethod>(_ method: Method.Type, _ call: VarlinkCall,
                                     on connection: VarlinkConnection) -> Method.Parameters? {
        let parameters: Method.Parameters
        do throws(ProtocolDecodingError) {
            parameters = try Method.Parameters(call.parameters, at: "", strict: true)
        } catch {
            if call.expectsReply { connection.fail(.invalidParameter(error.field)) }
            return nil
        }
        guard call.more || !Method.requiresMore else {
            connection.fail(.expectedMore)
            return nil
        }
        return parameters
    }

    // MARK: Apps

    /// `GetStatus`: the calling app's status.
    func getStatus(_ parameters: Guard.GetStatus.Parameters, _ served: ServedCall) {
        guard let caller = identify(served.connection, served.session), served.call.expectsReply else { return }
        let status = policy.ledger.status(user: caller.account.name, appID: caller.app.appID,
                                          directory: caller.app.directoryIdentity, flatpak: caller.app.flatpak,
                                          runtime: caller.app.flatpakRuntime)
        served.connection.reply(Guard.GetStatus.Reply(app: caller.app.appID, user: caller.account.name,
                                                      status: Guard.Status(status)).object)
    }

    /// `Subscribe`: follows the caller's status on this connection, within its
    /// bound of subscriptions. Runs on the connection's lane, so the count
    /// checked is the count kept.
    func subscribe(_ parameters: Guard.Subscribe.Parameters, _ served: ServedCall) {
        let (connection, session) = (served.connection, served.session)
        guard let caller = identify(connection, session) else { return }
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
                                           directory: caller.app.directoryIdentity, flatpak: caller.app.flatpak,
                                          runtime: caller.app.flatpakRuntime)
                connection.reply(Guard.Subscribe.Reply(status: Guard.Status(status)).object, continues: true)
            }
        }
        let token = policy.ledger.subscribe(user: caller.account.name, appID: caller.app.appID) { _ in send() }
        guard session.keepSubscription({ [policy] in policy.ledger.unsubscribe(token) }) else { return }
        send()
    }

    /// `Answer`: hands the answer to the prompt of the request in progress on
    /// this connection, if there is one.
    func answer(_ parameters: Guard.Answer.Parameters, _ served: ServedCall) {
        served.session.activeChannel?.deliver(id: parameters.id, response: parameters.response)
        if served.call.expectsReply { served.connection.reply(Guard.Answer.Reply().object) }
    }

    /// `RequestAuthorization`, once ``applicant(_:_:)`` has admitted the caller.
    func requestAuthorization(_ parameters: Guard.RequestAuthorization.Parameters, _ caller: Caller,
                              _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.RequestAuthorization.Reply {
        let status = try policy.request(FamilyControlsMember(parameters.member), from: caller, over: channel)
        return Guard.RequestAuthorization.Reply(status: Guard.Status(status))
    }

    /// `RevokeAuthorization`, the caller worked out by ``app(_:_:)``.
    func revokeAuthorization(_ parameters: Guard.RevokeAuthorization.Parameters, _ caller: Caller,
                             _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.RevokeAuthorization.Reply {
        try policy.revoke(from: caller, over: channel)
        return Guard.RevokeAuthorization.Reply()
    }

    /// `UpdateApp`, the caller worked out by ``updater(_:_:)``.
    func updateApp(_ parameters: Guard.UpdateApp.Parameters, _ caller: Caller,
                   _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.UpdateApp.Reply {
        let outcome: Guard.UpdateOutcome = switch try policy.update(from: caller, over: channel) {
        case .signed: .signed
        case .approved: .approved
        }
        return Guard.UpdateApp.Reply(outcome: outcome)
    }

    /// `DecideRequest`, once ``decider(_:_:)`` has found the request theirs to decide.
    func decideRequest(_ parameters: Guard.DecideRequest.Parameters, _ requester: Administrator,
                       _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.DecideRequest.Reply {
        let view = try policy.decide(parameters.id, approve: parameters.approve,
                                     minutes: try parameters.minutes.map { minutes throws(GuardFailure) in
                                         guard minutes >= 1, minutes <= Int64(policy.limits.mostMoreTimeMinutes) else {
                                             throw GuardFailure(.familyControls(.invalidArgument), "minutes must be a whole "
                                                 + "number from 1 to \(policy.limits.mostMoreTimeMinutes), not \(minutes)")
                                         }
                                         return Int(minutes)
                                     }, requester: requester.account,
                                     session: requester.session, over: channel)
        return Guard.DecideRequest.Reply(authorization: view?.wire)
    }

    // MARK: Who is calling, before a conversation starts

    /// The app calling, worked out afresh.
    func app(_ parameters: Guard.RevokeAuthorization.Parameters, _ served: ServedCall) -> Result<Caller, GuardFailure> {
        caller(of: served.connection, served.session, fresh: true)
    }

    /// The app asking to be updated, worked out afresh.
    func updater(_ parameters: Guard.UpdateApp.Parameters, _ served: ServedCall) -> Result<Caller, GuardFailure> {
        caller(of: served.connection, served.session, fresh: true)
    }

    /// The app calling, worked out afresh, if it may ask as `member` at all:
    /// someone who is no one's child asking as a child is refused here,
    /// before a conversation starts.
    func applicant(_ parameters: Guard.RequestAuthorization.Parameters, _ served: ServedCall) -> Result<Caller, GuardFailure> {
        let member = FamilyControlsMember(parameters.member)
        return caller(of: served.connection, served.session, fresh: true).flatMap { caller in
            do throws(GuardFailure) {
                try policy.admit(member, from: caller)
                return .success(caller)
            } catch {
                return .failure(error)
            }
        }
    }

    /// The person calling (a guardian's `familyctl`, or root), if request
    /// `id` waits for them to decide it: anyone else is refused here, before
    /// a decision takes a thread.
    func decider(_ parameters: Guard.DecideRequest.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        let connection = served.connection
        do throws(GuardFailure) {
            let account = try requester(connection)
            _ = try policy.decidableRequest(parameters.id, for: account)
            return .success(Administrator(account: account, session: session(of: connection, for: account)))
        } catch {
            return .failure(error)
        }
    }

    /// The person calling on `connection` with `change` (SetStatus, Revoke,
    /// Graduate), if they may change the user it names at all: anyone else
    /// is refused here, before the call takes a decision thread.
    func administrator(of change: ProtectionChange, _ connection: VarlinkConnection) -> Result<Administrator, GuardFailure> {
        let user = change.user
        let graduating = if case .graduate = change { true } else { false }
        do throws(GuardFailure) {
            let account = try requester(connection)
            if account.uid != 0 {
                guard !graduating else { throw GuardFailure(.permissionDenied, "only root may graduate a child") }
                guard policy.may(account, administer: user) else {
                    let name = user.clipped
                    let verb = if case .revoke = change { "revoke" } else { "change" }
                    throw GuardFailure(.permissionDenied, "only root or a guardian of \(name) may \(verb) \(name)'s authorizations")
                }
            }
            return .success(Administrator(account: account, session: session(of: connection, for: account)))
        } catch {
            return .failure(error)
        }
    }

    /// Runs a call that may prompt (a request, a revoke that needs a guardian,
    /// a guardian's decision) in `pool`: PAM waits for people. Prompts go out
    /// as `continues` replies, answered with `Answer` calls; `body`'s
    /// parameters are the last reply. `who` says who is calling; each user
    /// has at most ``GuardLimits/conversationsPerUser`` under way.
    /// Only a call made with `more` gets here (the method table sees to it):
    /// there is somewhere to send the prompts.
    func startConversation<Method: GuardMethod, Who: ConversationStarter>(
        _ method: Method.Type, _ served: ServedCall, on pool: BlockingExecutor,
        who: @escaping @Sendable () -> Result<Who, GuardFailure>,
        _ body: @escaping @Sendable (Who, VarlinkRequestChannel) throws(GuardFailure) -> Method.Reply
    ) where Method.Reply: GuardPromptingReply {
        let (connection, session) = (served.connection, served.session)
        let channel = VarlinkRequestChannel(Method.self, connection: connection)
        // The session closes the channel if the connection closes.
        guard session.beginRequest(channel) else {
            return fail(connection, GuardFailure(.authorizationConflict, "a request is already in progress on this connection"))
        }
        session.enqueue(on: connection) { [self] in
            // The user's place is taken before they are identified, by the
            // kernel's word for who is calling: identifying runs an
            // inspector, and a flood of requests must cost no more than a
            // refusal each.
            let uid = connection.peer.uid
            if case .refused(let first) = perUser.enter(uid) {
                let name = ((try? UserDatabase.user(id: uid)) ?? nil)?.name ?? "uid \(uid)"
                if first {
                    logger.notice("request refused: \(name) already has \(perUser.limit) conversations under way, "
                        + "the most one user may have; refusing more until one ends")
                }
                channel.close()
                session.endRequest()
                return fail(connection, .busy("\(name) already has \(perUser.limit) requests under way, "
                    + "the most one user may have at once; finish or cancel one first"))
            }
            let caller: Who
            switch who() {
            case .success(let identified):
                caller = identified
            case .failure(let failure):
                // Free the place and the connection for the next call before the client hears the refusal.
                perUser.leave(uid)
                session.endRequest()
                return fail(connection, failure)
            }
            let run: @Sendable () -> Void = { [self] in
                let outcome: Result<Method.Reply, GuardFailure>
                do throws(GuardFailure) {
                    outcome = .success(try body(caller, channel))
                } catch {
                    outcome = .failure(error)
                }
                // Free the user's place and the connection for the next call
                // before the client hears the end.
                perUser.leave(uid)
                channel.close()
                session.endRequest()
                switch outcome {
                case .success(let reply): connection.reply(reply.object)
                case .failure(let failure): fail(connection, failure)
                }
            }
            do throws(BlockingExecutor.Saturated) {
                try pool.submit(run)
            } catch {
                logger.warning("request refused: \(error)")
                perUser.leave(uid)
                channel.close()
                session.endRequest()
                fail(connection, .busy)
            }
        }
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
    func caller(of connection: VarlinkConnection, _ session: ConnectionSession,
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
                                                           uid: peer.uid, roots: policy.family.appRoots(for: account),
                                                           flatpak: .of(policy.family.configuration, for: account))
            return .success(Caller(account: account, app: app, directory: directory))
        } catch {
            if case .processGone = error { return .failure(GuardFailure(.unavailable, error.description)) }
            if error.isInspectorFailure {
                logger.warning("inspector: a call of \(account.name)'s could not be identified: \(error.description)")
                policy.auditInspectorFailure(of: account.name, detail: error.description)
            }
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
        let error = failure.wire
        connection.fail(error.name, parameters: error.parameters)
    }
}

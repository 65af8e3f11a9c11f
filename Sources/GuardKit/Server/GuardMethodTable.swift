import GuardProtocol
import Varlink
import VarlinkServerKit

/// Where a method of the Guard's interface runs (ARCHITECTURE.md, Threads).
enum MethodPlace: String, Sendable, CaseIterable {
    /// The event loop thread, at once: only what never blocks.
    case loop
    /// The connection's lane on `guard-work`, in order with the connection's
    /// other slow calls.
    case lane
    /// `guard-talk`, the apps' conversation pool, once the lane has worked
    /// out who is calling.
    case conversations
    /// `guard-decide`, the guardians' and root's, once the lane has worked
    /// out who is calling.
    case decisions
}

/// Where one method runs.
struct MethodPlacement: Equatable, Sendable, CustomStringConvertible {
    /// Where a call runs.
    var runs: MethodPlace
    /// Whether a call is answered on the loop at once when the caller is
    /// already known and nothing waits on the lane (the hot path of `GetStatus`).
    var onLoopWhenCallerKnown = false
    /// Where a call made with `more` runs instead, if elsewhere.
    var withMore: MethodPlace?

    var description: String {
        var text = runs.rawValue
        if onLoopWhenCallerKnown { text = "loop when the caller is known, else " + text }
        if let withMore { text += ", with more \(withMore)" }
        return text
    }
}

/// A call being served: the call, its connection, and what the Guard keeps
/// for the connection.
struct ServedCall: Sendable {
    let call: VarlinkCall
    let connection: VarlinkConnection
    let session: ConnectionSession
}

/// A method's handler and where it runs. Handlers never choose a thread:
/// the route runs them where it says. (The method's type travels with the
/// call to the thread that serves it.)
struct MethodRoute<Method: GuardMethod & SendableMetatype>: Sendable {
    /// A handler that replies by itself, on the loop or the lane.
    typealias Handler = @Sendable (GuardService) -> @Sendable (Method.Parameters, ServedCall) -> Void

    let place: MethodPlace
    let onLoopWhenCallerKnown: Bool
    /// Runs the handler for a call whose parameters are checked.
    let start: @Sendable (GuardService, Method.Parameters, ServedCall) -> Void

    /// On the loop thread, at once.
    static func loop(_ handler: @escaping Handler) -> Self {
        Self(place: .loop, onLoopWhenCallerKnown: false) { service, parameters, served in
            handler(service)(parameters, served)
        }
    }

    /// On the connection's lane; with `onLoopWhenCallerKnown`, on the loop at
    /// once when the caller is already known and the lane is idle (so the
    /// reply cannot overtake an earlier call's).
    static func lane(_ handler: @escaping Handler, onLoopWhenCallerKnown: Bool = false) -> Self {
        Self(place: .lane, onLoopWhenCallerKnown: onLoopWhenCallerKnown) { service, parameters, served in
            if onLoopWhenCallerKnown, served.session.isIdle, case .success? = served.session.cachedCaller {
                return handler(service)(parameters, served)
            }
            served.session.enqueue(on: served.connection) { handler(service)(parameters, served) }
        }
    }

    /// A call that may prompt, on `guard-talk`: `caller` works out who is
    /// calling (and refuses whoever may not) on the lane, then `body` runs
    /// in the pool, its prompts and last reply sent over the connection.
    static func conversations<Who: ConversationStarter>(
        caller: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, ServedCall) -> Result<Who, GuardFailure>,
        _ body: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, Who, VarlinkRequestChannel) throws(GuardFailure) -> Method.Reply
    ) -> Self where Method.Reply: GuardPromptingReply {
        conversation(on: .conversations, caller: caller, body)
    }

    /// A call that may prompt, on `guard-decide`, as ``conversations(caller:_:)``.
    static func decisions<Who: ConversationStarter>(
        caller: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, ServedCall) -> Result<Who, GuardFailure>,
        _ body: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, Who, VarlinkRequestChannel) throws(GuardFailure) -> Method.Reply
    ) -> Self where Method.Reply: GuardPromptingReply {
        conversation(on: .decisions, caller: caller, body)
    }

    private static func conversation<Who: ConversationStarter>(
        on place: MethodPlace,
        caller: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, ServedCall) -> Result<Who, GuardFailure>,
        _ body: @escaping @Sendable (GuardService) -> @Sendable (Method.Parameters, Who, VarlinkRequestChannel) throws(GuardFailure) -> Method.Reply
    ) -> Self where Method.Reply: GuardPromptingReply {
        Self(place: place, onLoopWhenCallerKnown: false) { service, parameters, served in
            let pool = place == .decisions ? service.decisions : service.conversations
            service.startConversation(Method.self, served, on: pool, who: { caller(service)(parameters, served) }) {
                who, channel throws(GuardFailure) in try body(service)(parameters, who, channel)
            }
        }
    }
}

/// One method of the interface bound to its handler.
struct GuardMethodEntry: Sendable {
    /// The method's name within the interface.
    let name: String
    let placement: MethodPlacement
    let access: MethodAccess
    /// Checks the call's parameters and `more` against the interface, then
    /// runs the handler where the placement says.
    let serve: @Sendable (GuardService, ServedCall) -> Void

    /// `Method`, callable by `access`, served by `runs`, or by `withMore` for a call made with `more`.
    /// A caller `access` does not admit is refused before anything else
    /// (`PermissionDenied`: "only root may `doing`").
    static func bind<Method: GuardMethod & SendableMetatype>(_ method: Method.Type, access: MethodAccess, doing: String? = nil,
                                          runs: MethodRoute<Method>, withMore: MethodRoute<Method>? = nil) -> Self {
        let placement = MethodPlacement(runs: runs.place, onLoopWhenCallerKnown: runs.onLoopWhenCallerKnown,
                                        withMore: withMore?.place)
        return Self(name: Method.name, placement: placement, access: access) { service, served in
            guard access.admits(uid: served.connection.peer.uid) else {
                if served.call.expectsReply {
                    service.fail(served.connection, GuardFailure(.permissionDenied, "only \(access.summary) may \(doing ?? "call \(Method.name)")"))
                }
                return
            }
            guard let parameters = service.accept(Method.self, served.call, on: served.connection) else { return }
            let route = served.call.more ? withMore ?? runs : runs
            route.start(service, parameters, served)
        }
    }
}

/// The Guard's methods by name.
struct GuardMethodTable: Sendable {
    /// In the order they were bound.
    let entries: [GuardMethodEntry]
    /// Keyed by substrings, as calls name their method, so a look-up copies nothing.
    private let byName: [Substring: GuardMethodEntry]

    init(_ entries: [GuardMethodEntry]) {
        self.entries = entries
        byName = Dictionary(entries.map { (Substring($0.name), $0) }, uniquingKeysWith: { first, _ in first })
    }

    subscript(name: Substring) -> GuardMethodEntry? { byName[name] }
}

extension GuardService {
    /// The method table: each method of the interface, who may call it,
    /// where it runs, and its handler. `handle` checks a call's parameters and `more` against the
    /// interface on the loop before anything runs; ARCHITECTURE.md shows the
    /// table with who may call each method.
    static let methods = GuardMethodTable([
        // The apps'.
        .bind(Guard.GetStatus.self, access: .managedApp, runs: .lane(GuardService.getStatus, onLoopWhenCallerKnown: true)),
        .bind(Guard.Subscribe.self, access: .managedApp, runs: .lane(GuardService.subscribe)),
        .bind(Guard.RequestAuthorization.self, access: .managedApp,
              runs: .conversations(caller: GuardService.applicant, GuardService.requestAuthorization)),
        .bind(Guard.Answer.self, access: .requestConnection, runs: .loop(GuardService.answer)),
        .bind(Guard.RevokeAuthorization.self, access: .managedApp,
              runs: .conversations(caller: GuardService.app, GuardService.revokeAuthorization)),
        .bind(Guard.UpdateApp.self, access: .approvedChildApp, runs: .conversations(caller: GuardService.updater, GuardService.updateApp)),
        // The administrators'. SetStatus, Revoke and Graduate called with more
        // may ask a guardian to authenticate over the connection.
        .bind(Guard.ListAuthorizations.self, access: .anyone, runs: .lane(GuardService.listAuthorizations)),
        .bind(Guard.SetStatus.self, access: .rootOrGuardian, runs: .lane(GuardService.setStatus),
              withMore: .decisions(caller: GuardService.administrator, GuardService.setStatus)),
        .bind(Guard.Revoke.self, access: .rootOrGuardian, runs: .lane(GuardService.revoke),
              withMore: .decisions(caller: GuardService.administrator, GuardService.revoke)),
        .bind(Guard.Graduate.self, access: .root, doing: "graduate a child", runs: .lane(GuardService.graduate),
              withMore: .decisions(caller: GuardService.administrator, GuardService.graduate)),
        .bind(Guard.Forget.self, access: .root, doing: "forget a user", runs: .lane(GuardService.forget)),
        .bind(Guard.ListRequests.self, access: .anyone, runs: .lane(GuardService.listRequests)),
        .bind(Guard.WatchRequests.self, access: .anyone, runs: .lane(GuardService.watchRequests)),
        .bind(Guard.DecideRequest.self, access: .rootOrGuardian, runs: .decisions(caller: GuardService.decider, GuardService.decideRequest)),
        .bind(Guard.ReadAudit.self, access: .rootOrGuardian, runs: .lane(GuardService.readAudit)),
        .bind(Guard.VerifyLocks.self, access: .root, doing: "verify locks", runs: .lane(GuardService.verifyLocks)),
        // A guardian's one-time code: enrolling may ask them to authenticate.
        .bind(Guard.EnrollCode.self, access: .guardianNotRoot, runs: .decisions(caller: GuardService.enroller, GuardService.enrollCode)),
        .bind(Guard.RemoveCode.self, access: .guardianOwnOrRoot, runs: .lane(GuardService.removeCode)),
        // The PAM session module's.
        .bind(Guard.OpenSession.self, access: .root, doing: "tell the Guard of a session", runs: .lane(GuardService.openSession)),
        .bind(Guard.CloseSession.self, access: .root, doing: "tell the Guard of a session", runs: .lane(GuardService.closeSession)),
        .bind(Guard.ListSessions.self, access: .root, doing: "list sessions", runs: .lane(GuardService.listSessions)),
        // The monitors the Guard runs in the children's sessions.
        .bind(Guard.ListMonitors.self, access: .anyone, runs: .lane(GuardService.listMonitors)),
        .bind(Guard.IdentifyMonitor.self, access: .anyone, runs: .lane(GuardService.identifyMonitor)),
        .bind(Guard.WatchMonitorAlerts.self, access: .rootOrGuardian, runs: .lane(GuardService.watchMonitorAlerts)),
        // Time limits: an approved app's (a looser setting or more time waits
        // for a guardian), and root's and the guardians'.
        .bind(Guard.SetTimeLimits.self, access: .approvedChildApp, runs: .conversations(caller: GuardService.limitsApp, GuardService.setTimeLimits)),
        .bind(Guard.GetTimeLimits.self, access: .approvedChildApp, runs: .lane(GuardService.getTimeLimits)),
        .bind(Guard.RequestMoreTime.self, access: .approvedChildApp,
              runs: .conversations(caller: GuardService.limitsApp, GuardService.requestMoreTime)),
        .bind(Guard.ListTimeLimits.self, access: .rootOrGuardian, runs: .lane(GuardService.listTimeLimits)),
        .bind(Guard.SetChildLimits.self, access: .rootOrGuardian, runs: .lane(GuardService.setChildLimits),
              withMore: .decisions(caller: GuardService.limitsAdministrator, GuardService.setChildLimits)),
        .bind(Guard.ClearChildLimits.self, access: .rootOrGuardian, runs: .lane(GuardService.clearChildLimits),
              withMore: .decisions(caller: GuardService.limitsAdministrator, GuardService.clearChildLimits)),
        .bind(Guard.GrantMoreTime.self, access: .rootOrGuardian, runs: .lane(GuardService.grantMoreTime),
              withMore: .decisions(caller: GuardService.limitsAdministrator, GuardService.grantMoreTime)),
    ])
}

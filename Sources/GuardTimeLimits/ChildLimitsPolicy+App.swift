import GuardPolicy
import GuardProtocol
import GuardStore
import Synchronization
import SystemKit
import TimeLimits

// An approved app's calls, identified as requests are (``Caller``): the app
// is who the kernel says it is, never what its arguments say, so whoever
// runs it with whatever arguments gains at most a request.
extension ChildLimitsPolicy {
    /// How an app's limits took effect.
    package enum AppOutcome: Sendable, Equatable {
        /// As strict as before or stricter: at once.
        case applied
        /// Looser: a parent or guardian approved them.
        case approved
    }

    /// `SetTimeLimits`: the calling app's whole setting for its child (nil
    /// hours or daily time: no limit of that kind). As strict as the app's
    /// limits in force or stricter (``TimeLimits/isAtLeastAsStrict(as:)``):
    /// recorded at once. Looser: a `limits` request a guardian decides, the
    /// call waiting for it as a request for approval does.
    /// - Throws: `Restricted` for an app not approved for its child from this
    ///   folder; `InvalidArgument` for limits that do not read; the
    ///   guardian's refusal, or the request's end, as `AuthorizationCanceled`.
    package func set(hours: String?, daily: String?, atEnd: String?, from caller: Caller,
                     over channel: any RequestChannel) throws(GuardFailure) -> AppOutcome {
        let user = caller.account.name, appID = caller.app.appID
        try checkApproved(caller, doing: "set time limits")
        // Bounded as requests are: a child cannot flood the store or the audit trail.
        try policy.checkQuota(.limits, .child, caller: caller)
        let limits = try Self.parse(hours: hours, daily: daily, atEnd: atEnd ?? "lock", onto: TimeLimits(),
                                    unlimitedLifts: false)
        let current = try setting(user: user, appID: appID)?.limits
        let uid = caller.account.uid
        if limits == current { return .applied }
        if limits.isAtLeastAsStrict(as: current) {
            try save(limits, user: user, uid: uid, appID: appID, by: user, outcome: .applied,
                     detail: "set by the app, as strict as before or stricter")
            return .applied
        }
        let proposal = PendingRequest.Proposal(
            summary: "set \(user)'s time limits to \(Self.spoken(limits)) (now: \(Self.spoken(current)))",
            limits: Self.spoken(limits),
            approve: { [self] guardian, _ throws(GuardFailure) in
                try checkApproved(caller, doing: "set time limits")
                try save(limits, user: user, uid: uid, appID: appID, by: guardian, outcome: .approved,
                         detail: "asked by the app, approved by \(guardian)")
            },
            deny: { [self] guardian in
                ledger.audit(.limits, actor: guardian, user: user, appID: appID, member: .child, outcome: .denied,
                             detail: "the limits in force stay: \(Self.spoken(current))")
            })
        ledger.audit(.limits, actor: user, user: user, appID: appID, member: .child, outcome: .pending,
                     detail: "looser than the limits in force (\(Self.spoken(current))): a parent or guardian decides")
        try Self.finish(try policy.awaitGuardian(.limits, caller: caller, proposal: proposal, over: channel),
                        denied: "the time limits in force stay")
        return .approved
    }

    /// `RequestMoreTime`: asks a parent or guardian for `minutes` more
    /// session time today, with the child's `reason`.
    /// - Returns: the seconds given (a guardian may give another number of minutes).
    package func requestMoreTime(minutes: Int64, reason: String?, from caller: Caller,
                                 over channel: any RequestChannel) throws(GuardFailure) -> Int {
        let user = caller.account.name
        try checkApproved(caller, doing: "ask for more time")
        try policy.checkQuota(.time, .child, caller: caller)
        let bound = policy.limits.mostMoreTimeMinutes
        let asked = try Self.checkedMinutes(minutes, bound: bound)
        guard try views(user: user).first != nil else {
            throw GuardFailure(.familyControls(.invalidArgument), "\(user) has no time limits in force: there is no more time to ask for")
        }
        let reason = reason.map { DisplayText.sanitized($0, limit: policy.limits.moreTimeReasonCharacters) }
            .flatMap { $0.isEmpty ? nil : $0 }
        // A parent or guardian at the child's screen, with their one-time code:
        // at most [Limits] MostTimeByCode=, and more time only: a code never
        // lifts or loosens a limit (SetTimeLimits never offers it).
        let byCode = Int(policy.family.configuration.mostTimeByCode.components.seconds)
        if byCode > 0, let guardian = try policy.guardianAtTheScreen(
            of: caller, asking: "Ask a parent or guardian for \(asked) more minutes today for \(user)?", over: channel) {
            guard let view = try views(user: user).first else {
                throw GuardFailure(.notFound, "\(user) no longer has time limits in force")
            }
            let seconds = min(asked * 60, byCode)
            try give(seconds, to: view.inForce, by: guardian, detail: "given at \(user)'s screen with \(guardian)'s one-time "
                + "code (at most \(SessionDuration(seconds: byCode).description), [Limits] MostTimeByCode=)")
            return seconds
        }
        let given = Mutex<Int>(0)
        let proposal = PendingRequest.Proposal(
            summary: "give \(user) \(asked) more minutes today" + (reason.map { " (\(user) says: “\($0)”)" } ?? ""),
            minutes: asked, reason: reason,
            approve: { [self] guardian, minutes throws(GuardFailure) in
                let minutes = try Self.checkedMinutes(Int64(minutes ?? asked), bound: bound)
                guard let view = try views(user: user).first else {
                    throw GuardFailure(.notFound, "\(user) no longer has time limits in force")
                }
                try give(minutes * 60, to: view.inForce, by: guardian, detail: "asked by \(caller.app.appID), approved by \(guardian)")
                given.withLock { $0 = minutes * 60 }
            },
            deny: { [self] guardian in
                ledger.audit(.time, actor: guardian, user: user, appID: caller.app.appID, member: .child,
                             outcome: .denied, detail: "no more time")
            })
        try Self.finish(try policy.awaitGuardian(.time, caller: caller, proposal: proposal, over: channel),
                        denied: "no more time was given")
        return given.withLock { $0 }
    }

    /// `GetTimeLimits`: the limits in force for the calling app's child.
    package func limits(for caller: Caller) throws(GuardFailure) -> ChildLimitsView? {
        try checkApproved(caller, doing: "read time limits")
        return try views(user: caller.account.name).first
    }

    /// Refuses, audited, an app that is not approved for its child from the folder it runs from.
    func checkApproved(_ caller: Caller, doing what: String) throws(GuardFailure) {
        let user = caller.account.name, appID = caller.app.appID
        guard let approval = try ledger.authorization(user: user, appID: appID), approval.member == .child,
              approval.status == .approved, approval.uid == caller.account.uid,
              approval.appIdentity == caller.app.directoryIdentity else {
            ledger.audit(.limits, actor: user, user: user, appID: appID, member: .child, outcome: .refused,
                         detail: "\(what): not an app approved for \(user) as a child, run from its approved folder")
            throw GuardFailure(.restricted, "only an app approved for \(user) as a child, run from its approved folder, "
                + "may \(what)")
        }
    }

    /// Returns for a request a guardian approved; throws for every other end.
    static func finish(_ outcome: PendingRequest.Outcome, denied: String) throws(GuardFailure) {
        switch outcome {
        case .approved: return
        case .denied(let guardian): throw GuardFailure(.authorizationCanceled, "\(denied) (decided by \(guardian))")
        case .failed(let error): throw error
        case .canceled(let reason): throw GuardFailure(.authorizationCanceled, "the request was canceled: \(reason)")
        case .expired: throw GuardFailure(.authorizationCanceled, "no parent or guardian decided in time; ask again")
        }
    }
}

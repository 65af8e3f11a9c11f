import GuardProtocol
import GuardPolicy
import GuardTimeLimits
import SystemKit
import TimeLimits
import Varlink
import VarlinkServerKit

extension GuardService {
    // MARK: The apps': their child's time limits, identified as requests are.

    /// The app calling, worked out afresh, for a call that may wait for a guardian.
    func limitsApp(_ parameters: Guard.SetTimeLimits.Parameters, _ served: ServedCall) -> Result<Caller, GuardFailure> {
        caller(of: served.connection, served.session, fresh: true)
    }

    func limitsApp(_ parameters: Guard.RequestMoreTime.Parameters, _ served: ServedCall) -> Result<Caller, GuardFailure> {
        caller(of: served.connection, served.session, fresh: true)
    }

    /// `SetTimeLimits`, on `guard-talk`: a looser setting waits for a guardian.
    func setTimeLimits(_ parameters: Guard.SetTimeLimits.Parameters, _ caller: Caller,
                       _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.SetTimeLimits.Reply {
        let outcome = try timeLimits.set(hours: parameters.hours, daily: parameters.daily, atEnd: parameters.atEnd?.rawValue,
                                         from: caller, over: channel)
        return Guard.SetTimeLimits.Reply(outcome: outcome == .applied ? .applied : .approved)
    }

    /// `RequestMoreTime`, on `guard-talk`: waits for a guardian.
    func requestMoreTime(_ parameters: Guard.RequestMoreTime.Parameters, _ caller: Caller,
                         _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.RequestMoreTime.Reply {
        let granted = try timeLimits.requestMoreTime(minutes: parameters.minutes, reason: parameters.reason, from: caller,
                                                     over: channel)
        return Guard.RequestMoreTime.Reply(granted: Int64(granted))
    }

    /// `GetTimeLimits`: the calling app's child's limits in force.
    func getTimeLimits(_ parameters: Guard.GetTimeLimits.Parameters, _ served: ServedCall) {
        guard let caller = identify(served.connection, served.session) else { return }
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            Guard.GetTimeLimits.Reply(limits: try timeLimits.limits(for: caller)?.wire).object
        }
    }

    // MARK: Root's and the guardians'.

    /// `ListTimeLimits`: the children's limits the caller may see.
    func listTimeLimits(_ parameters: Guard.ListTimeLimits.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            Guard.ListTimeLimits.Reply(children: try timeLimits.list(user: parameters.user, requester: requester).map(\.wire)).object
        }
    }

    // Without more: root, or a guardian whose session authenticated lately.

    func setChildLimits(_ parameters: Guard.SetChildLimits.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            try setChildLimits(parameters, requester: requester, proof: unasked(served, requester)).object
        }
    }

    func clearChildLimits(_ parameters: Guard.ClearChildLimits.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            try clearChildLimits(parameters, requester: requester, proof: unasked(served, requester)).object
        }
    }

    func grantMoreTime(_ parameters: Guard.GrantMoreTime.Parameters, _ served: ServedCall) {
        respond(served) { requester throws(GuardFailure) in
            try grantMoreTime(parameters, requester: requester, proof: unasked(served, requester)).object
        }
    }

    private func unasked(_ served: ServedCall, _ requester: UserAccount) -> GuardianProof {
        GuardianProof(session: session(of: served.connection, for: requester), channel: nil)
    }

    // With more, on a decision thread: a guardian may be asked to authenticate.

    func limitsAdministrator(_ parameters: Guard.SetChildLimits.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        limitsAdministrator(of: parameters.user, served.connection)
    }

    func limitsAdministrator(_ parameters: Guard.ClearChildLimits.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        limitsAdministrator(of: parameters.user, served.connection)
    }

    func limitsAdministrator(_ parameters: Guard.GrantMoreTime.Parameters, _ served: ServedCall) -> Result<Administrator, GuardFailure> {
        limitsAdministrator(of: parameters.user, served.connection)
    }

    /// Root, or a guardian of `user`: anyone else is refused before a decision takes a thread.
    private func limitsAdministrator(of user: String, _ connection: VarlinkConnection) -> Result<Administrator, GuardFailure> {
        do throws(GuardFailure) {
            let account = try requester(connection)
            guard account.uid == 0 || policy.may(account, administer: user) else {
                throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may change \(user.clipped)'s time limits")
            }
            return .success(Administrator(account: account, session: session(of: connection, for: account)))
        } catch {
            return .failure(error)
        }
    }

    func setChildLimits(_ parameters: Guard.SetChildLimits.Parameters, _ requester: Administrator,
                        _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.SetChildLimits.Reply {
        try setChildLimits(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    func clearChildLimits(_ parameters: Guard.ClearChildLimits.Parameters, _ requester: Administrator,
                          _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.ClearChildLimits.Reply {
        try clearChildLimits(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    func grantMoreTime(_ parameters: Guard.GrantMoreTime.Parameters, _ requester: Administrator,
                       _ channel: VarlinkRequestChannel) throws(GuardFailure) -> Guard.GrantMoreTime.Reply {
        try grantMoreTime(parameters, requester: requester.account, proof: requester.proof(over: channel))
    }

    private func setChildLimits(_ parameters: Guard.SetChildLimits.Parameters, requester: UserAccount,
                                proof: GuardianProof) throws(GuardFailure) -> Guard.SetChildLimits.Reply {
        let view = try timeLimits.set(user: parameters.user, appID: parameters.app, hours: parameters.hours,
                                      daily: parameters.daily, atEnd: parameters.atEnd?.rawValue, requester: requester,
                                      proof: proof)
        return Guard.SetChildLimits.Reply(limits: view?.wire)
    }

    private func clearChildLimits(_ parameters: Guard.ClearChildLimits.Parameters, requester: UserAccount,
                                  proof: GuardianProof) throws(GuardFailure) -> Guard.ClearChildLimits.Reply {
        let view = try timeLimits.clear(user: parameters.user, appID: parameters.app, requester: requester, proof: proof)
        return Guard.ClearChildLimits.Reply(limits: view?.wire)
    }

    private func grantMoreTime(_ parameters: Guard.GrantMoreTime.Parameters, requester: UserAccount,
                               proof: GuardianProof) throws(GuardFailure) -> Guard.GrantMoreTime.Reply {
        let view = try timeLimits.grantMore(user: parameters.user, minutes: parameters.minutes, requester: requester, proof: proof)
        return Guard.GrantMoreTime.Reply(limits: view?.wire)
    }
}

extension ChildLimitsView {
    /// The `ChildLimits` type of the interface.
    var wire: Guard.ChildLimits {
        let limits = inForce.limits
        return Guard.ChildLimits(
            user: inForce.user, uid: Int64(inForce.uid),
            apps: settings.map { setting in
                Guard.AppTimeLimits(app: setting.record.appID, name: setting.name == setting.record.appID ? nil : setting.name,
                                    hours: setting.limits.hours?.description,
                                    daily: setting.limits.daily.map { Int64($0.seconds) },
                                    atEnd: setting.limits.atEnd == .end ? .end : .lock, setBy: setting.record.setBy,
                                    setAt: setting.record.setAt.seconds)
            },
            hours: limits.hours?.description, daily: limits.daily.map { Int64($0.seconds) },
            atEnd: limits.atEnd == .end ? .end : .lock, day: inForce.day, used: usedSeconds.map(Int64.init),
            extra: Int64(inForce.extraSeconds), left: leftSeconds.map(Int64.init),
            openUntil: inForce.openUntil > 0 ? inForce.openUntil : nil, allowedNow: allowedNow, nextAllowed: nextAllowed)
    }
}

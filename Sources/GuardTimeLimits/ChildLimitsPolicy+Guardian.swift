import FamilyConfiguration
import GuardIdentity
import GuardPolicy
import GuardProtocol
import GuardStore
import SystemKit
import TimeLimits

// Root and the children's guardians: `familyctl limits`, `limits set`,
// `limits clear`, `limits more`. Changes authenticate as every other verb
// that changes a child's protection does (``AuthorizationPolicy/authenticate``).
extension ChildLimitsPolicy {
    /// `familyctl limits [--user USER]`: the limits in force for the
    /// children `requester` administers (everyone's for root).
    /// - Throws: `PermissionDenied` for a user who is not theirs.
    package func list(user: String?, requester: UserAccount) throws(GuardFailure) -> [ChildLimitsView] {
        guard let user else { return try views(user: nil).filter { policy.may(requester, administer: $0.inForce.user) } }
        try checkUser(user, requester: requester)
        return try views(user: user)
    }

    /// `familyctl limits set`: sets the limits `appID`, an app approved for
    /// `user` as a child, keeps for them; each of `hours`, `daily`, `atEnd`
    /// given replaces the app's (`unlimited` lifts hours or daily time), the
    /// others stay. Takes effect at once.
    /// - Returns: the child's limits as they now are.
    package func set(user: String, appID: String, hours: String?, daily: String?, atEnd: String?,
                     requester: UserAccount, proof: GuardianProof) throws(GuardFailure) -> ChildLimitsView? {
        let approval = try approvedChildApp(user: user, appID: appID, requester: requester)
        guard hours != nil || daily != nil || atEnd != nil else {
            throw GuardFailure(.familyControls(.invalidArgument), "nothing to set: give --hours, --daily or --at-end")
        }
        let current = try setting(user: user, appID: appID)
        let limits = try Self.parse(hours: hours, daily: daily, atEnd: atEnd, onto: current?.limits ?? TimeLimits(),
                                    unlimitedLifts: true)
        let name = approval.displayName ?? appID
        try policy.authenticate(requester, .limits, child: user, appID: appID, context: "limits set",
                                showing: "Set the time limits “\(name)” keeps for \(user): \(Self.spoken(limits)) "
                                    + "(now: \(Self.spoken(current?.limits))).", proof: proof)
        try save(limits, user: user, uid: approval.uid, appID: appID, by: requester.name, outcome: .applied,
                 detail: "set by \(requester.name)")
        return try views(user: user).first
    }

    /// `familyctl limits clear`: removes the limits `appID` set for `user`.
    /// - Throws: `NotFound` when it set none.
    package func clear(user: String, appID: String, requester: UserAccount,
                       proof: GuardianProof) throws(GuardFailure) -> ChildLimitsView? {
        let approval = try approvedChildApp(user: user, appID: appID, requester: requester)
        guard let current = try setting(user: user, appID: appID) else {
            throw GuardFailure(.notFound, "\(appID.clipped) set no time limits for \(user.clipped)")
        }
        try policy.authenticate(requester, .limits, child: user, appID: appID, context: "limits clear",
                                showing: "Clear the time limits “\(approval.displayName ?? appID)” keeps for \(user) "
                                    + "(now: \(Self.spoken(current.limits))).", proof: proof)
        try save(TimeLimits(), user: user, uid: approval.uid, appID: appID, by: requester.name, outcome: .removed,
                 detail: "cleared by \(requester.name)")
        return try views(user: user).first
    }

    /// `familyctl limits more`: gives `user` `minutes` more session time
    /// today; outside their hours, they may also log in for that long.
    /// - Throws: `InvalidArgument` for minutes out of bounds, `NotFound`
    ///   for a child with no limits in force.
    package func grantMore(user: String, minutes: Int64, requester: UserAccount,
                           proof: GuardianProof) throws(GuardFailure) -> ChildLimitsView? {
        try checkUser(user, requester: requester)
        let minutes = try Self.checkedMinutes(minutes, bound: policy.limits.mostMoreTimeMinutes)
        guard let view = try views(user: user).first else {
            throw GuardFailure(.notFound, "\(user.clipped) has no time limits in force: there is no time to add")
        }
        try policy.authenticate(requester, .time, child: user, appID: nil, context: "limits more",
                                showing: "Give \(user) \(minutes) more minutes today.", proof: proof)
        try give(minutes * 60, to: view.inForce, by: requester.name, detail: "given by \(requester.name)")
        return try views(user: user).first
    }

    /// Minutes within 1…`bound`.
    static func checkedMinutes(_ minutes: Int64, bound: Int) throws(GuardFailure) -> Int {
        guard minutes >= 1, minutes <= Int64(bound) else {
            throw GuardFailure(.familyControls(.invalidArgument), "minutes must be a whole number from 1 to \(bound), "
                + "not \(minutes)")
        }
        return Int(minutes)
    }

    /// A user name `requester` may administer.
    func checkUser(_ user: String, requester: UserAccount) throws(GuardFailure) {
        guard Principal.isValidName(user) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(user.clipped)\" is not a valid user name")
        }
        guard policy.may(requester, administer: user) else {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user) may see or change \(user)'s time limits")
        }
    }

    /// The approval of `appID` for `user` as a child, which `requester` may administer.
    /// - Throws: `InvalidArgument` for a malformed name, `PermissionDenied`,
    ///   `NotFound` for an app not approved for them as a child.
    func approvedChildApp(user: String, appID: String, requester: UserAccount) throws(GuardFailure) -> AuthorizationRecord {
        try checkUser(user, requester: requester)
        guard AppIdentity.isValidAppID(appID) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(appID.clipped)\" is not a valid app ID")
        }
        guard let approval = try ledger.authorization(user: user, appID: appID), approval.status == .approved,
              approval.member == .child else {
            throw GuardFailure(.notFound, "\(appID) is not approved for \(user) as a child: only an approved app's "
                + "time limits can be set (see familyctl status)")
        }
        return approval
    }

    /// The limits `appID` set for `user`, if any (and if they read).
    func setting(user: String, appID: String) throws(GuardFailure) -> AppLimitsSetting? {
        try storedLimits(user: user).first { $0.appID == appID }.flatMap { AppLimitsSetting($0, name: nil) }
    }
}

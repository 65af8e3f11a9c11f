import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import SystemKit
import GuardStore

extension AuthorizationPolicy {
    /// `familyctl forget USER`: removes every record of a user who no longer
    /// exists: each authorization (a child's approved app unlocked first),
    /// a lock the journal still holds for them, and their one-time code. The
    /// audit trail keeps what happened, with this, until `[Audit]
    /// Retention=` prunes it. Root only.
    ///
    /// Only on a positive answer: a user the database knows keeps every
    /// record (revoke or graduate them instead), and one a directory cannot
    /// answer for keeps every record until it can.
    /// - Returns: what was removed: the app IDs, and "one-time code".
    package func forget(user: String, requester: UserAccount) throws(GuardFailure) -> [String] {
        guard requester.uid == 0 else { throw GuardFailure(.permissionDenied, "only root may forget a user") }
        guard Principal.isValidName(user) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(user.clipped)\" is not a valid user name")
        }
        let account: UserAccount?
        do throws(Errno) {
            account = try UserDatabase.userIfEverySourceAnswers(named: user)
        } catch {
            throw GuardFailure(.familyControls(.networkError),
                               "the user database could not say whether \(user.clipped) exists (\(error)); "
                                   + "nothing was forgotten: run it again once every source in nsswitch.conf answers")
        }
        guard account == nil else {
            throw GuardFailure(.familyControls(.invalidArgument),
                               "\(user.clipped) still has an account: only a user who no longer exists is forgotten "
                                   + "(to end a child's approvals: familyctl graduate \(user.clipped))")
        }
        var removed: [String] = []
        for record in try ledger.authorizations(user: user) {
            try turns.save(StatusHub.Key(user: user, appID: record.appID)) { () throws(GuardFailure) in
                try ledger.remove(user: user, appID: record.appID,
                                  audit: ledger.event(.forget, actor: requester.name, user: user, appID: record.appID,
                                                      member: record.member, outcome: .forgotten,
                                                      detail: "\(record.status) authorization of a user who no longer exists"))
                if record.member == .child { keeper.release(user: user, appID: record.appID, actor: requester.name) }
            }
            removed.append(record.appID)
        }
        // A lock the journal holds with no authorization beside it (a Guard killed between the two).
        let locked: [(user: String, appID: String)]
        do { locked = try keeper.locker.lockedApps() } catch {
            throw .internalError("the Guard could not read its lock journal; see its log")
        }
        for lock in locked where lock.user == user && !removed.contains(lock.appID) {
            keeper.release(user: user, appID: lock.appID, actor: requester.name)
            removed.append(lock.appID)
        }
        if try codes.remove(user, in: family.configuration.guardianCodeFile) { removed.append("one-time code") }
        // The time limits their apps set, and the more time they were given.
        do throws(StoreError) {
            if try ledger.store.deleteTimeLimits(user: user, appID: nil, audit: ledger.event(
                .limits, actor: requester.name, user: user, appID: nil, member: .child, outcome: .forgotten,
                detail: "time limits of a user who no longer exists")) {
                removed.append("time limits")
            }
            try ledger.store.pruneMoreTime(user: user)
        } catch {
            logger.error("store: cannot forget the time limits of \(user): \(error)")
            throw .internalError("the Guard could not remove \(user.clipped)'s time limits from its store; see its log")
        }
        ledger.audit(.forget, actor: requester.name, user: user, appID: nil, member: nil,
                     outcome: removed.isEmpty ? .noEffect : .forgotten,
                     detail: removed.isEmpty ? "no records" : removed.joined(separator: " "))
        logger.notice("forget: \(user) by \(requester.name); removed \(removed.isEmpty ? "nothing" : removed.joined(separator: ", "))")
        return removed
    }
}

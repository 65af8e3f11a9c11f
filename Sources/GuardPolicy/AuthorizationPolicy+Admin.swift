import FamilyControlsModel
import GuardProtocol
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import FamilyConfiguration
import LockEngine
import GuardIdentity
import GuardStore

/// One authorization as administrators see it, with its lock.
package struct AuthorizationView: Hashable, Sendable {
    package var record: AuthorizationRecord
    /// What became of its lock.
    package var lock: ShownLock
    /// The app directory's current path (it follows renames of the child's folders).
    package var path: String
}

extension AuthorizationPolicy {
    /// `revokeAuthorization` from the app itself: approved → not determined and
    /// unlocked; denied or not determined → no effect.
    ///
    /// A child's approval is released only after a guardian decides, as for
    /// the approval, from their own session (or in the app when
    /// `InSessionApproval=yes`): the child can run the app's own program (or
    /// borrow its connection), so the app's word alone must never lift the
    /// lock. Only the approved directory's own program may ask. Every revoke
    /// counts against the user's quota of requests, as a request does.
    package func revoke(from caller: Caller, over channel: any RequestChannel) throws(GuardFailure) {
        _ = try AppRequest(policy: self, purpose: .revoke, caller: caller, channel: channel).run()
    }

    /// Lifts `user`'s approval of `appID`, recorded first, then unlocked (a
    /// child's); no effect when nothing is approved. Call in the (user, app)
    /// save turn (``AppTurns/save(_:_:)``).
    func revoke(user: String, appID: String, actor: String, action: AuditAction = .revoke,
                detail: String? = nil) throws(GuardFailure) {
        guard let current = try ledger.authorization(user: user, appID: appID), current.status == .approved else {
            ledger.audit(action, actor: actor, user: user, appID: appID, member: nil, outcome: .noEffect,
                         detail: "not approved")
            return
        }
        try ledger.remove(user: user, appID: appID, audit: ledger.event(action, actor: actor, user: user, appID: appID,
                                                           member: current.member, outcome: .revoked, detail: detail))
        logger.notice("\(action): \(appID) for \(user) by \(actor)" + (detail.map { ": \($0)" } ?? ""))
        if current.member == .child { keeper.release(user: user, appID: appID, actor: actor) }
        if current.flatpakOrigin != nil {
            logger.notice("flatpak: \(appID) stays installed in the Guard's installation, runnable by \(user); "
                + "root removes it with: flatpak uninstall --installation=familycontrols \(appID)")
        }
    }

    /// Every authorization the requester may see: all for root, their children's for a guardian.
    package func list(user: String?, requester: UserAccount) throws(GuardFailure) -> [AuthorizationView] {
        if let user, !may(requester, administer: user) {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may see \(user.clipped)'s authorizations")
        }
        let records = try ledger.authorizations(user: user)
        if let user, records.isEmpty { try requireKnown(user) }
        var views: [AuthorizationView] = []
        for record in records where may(requester, administer: record.user) {
            views.append(try view(record))
        }
        return views
    }

    /// A user named by an administrator who has nothing recorded must at
    /// least exist: a typo answers "no such user", not "nothing found".
    /// (A deleted user's records are still shown, and can still be cleared.)
    private func requireKnown(_ user: String) throws(GuardFailure) {
        let known: UserAccount?
        do throws(Errno) {
            known = Principal.isValidName(user) ? try UserDatabase.user(named: user) : nil
        } catch {
            throw GuardFailure(.networkError, "the user directory could not be reached to look up \(user.clipped): \(error)")
        }
        guard known != nil else { throw GuardFailure(.notFound, "no such user \(user.clipped)") }
    }

    /// `familyctl log`: the newest `limit` audit events, oldest first,
    /// filtered as asked. Root reads all; a guardian the events about their
    /// own children, read back page by page (within the newest
    /// ``GuardLimits/auditScanBound`` events) until `limit` of theirs are found.
    package func auditEvents(user: String?, appID: String?, since: Double?, limit: Int,
                             requester: UserAccount) throws(GuardFailure) -> [AuditEvent] {
        if let user, requester.uid != 0, !may(requester, administer: user) {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may read \(user.clipped)'s audit events")
        }
        var guardian = requester.uid == 0 || user != nil
        do throws(Errno) {
            if !guardian { guardian = try family.guardsSomeone(requester) }
        } catch {
            throw GuardFailure(.networkError, "the user directory could not be reached to check the family: \(error)")
        }
        var events: [AuditEvent] = []
        do throws(StoreError) {
            if requester.uid == 0 || user != nil {
                events = try ledger.store.auditEvents(user: user, appID: appID, since: since, limit: limit)
            } else if guardian {
                // Page back through everyone's events, keeping this guardian's
                // children's; each user is looked up once per call.
                var verdicts: [String: Bool] = [:]
                func isTheirs(_ user: String) -> Bool {
                    if let known = verdicts[user] { return known }
                    let verdict = may(requester, administer: user)
                    verdicts[user] = verdict
                    return verdict
                }
                let page = 500
                var pages: [[AuditEvent]] = []
                var found = 0, scanned = 0
                var before: Int64?
                while found < limit, scanned < limits.auditScanBound {
                    let batch = try ledger.store.auditEvents(appID: appID, since: since, beforeID: before, limit: page)
                    let theirs = batch.filter { isTheirs($0.user) }
                    pages.append(theirs)
                    found += theirs.count
                    scanned += batch.count
                    guard batch.count == page, let first = batch.first?.id else { break }
                    before = first
                }
                events = Array(pages.reversed().joined().suffix(limit))
            }
            // Anyone else is named guardian of no one: nothing to read, and no scan.
        } catch {
            throw GuardFailure(.unavailable, "the audit trail cannot be read: \(error)")
        }
        if let user, events.isEmpty { try requireKnown(user) }
        return events
    }

    func view(_ record: AuthorizationRecord) throws(GuardFailure) -> AuthorizationView {
        let (lock, path) = try keeper.state(of: record)
        return AuthorizationView(record: record, lock: lock, path: path)
    }

    /// `familyctl set`: an administrator (or the child's guardian, once
    /// authenticated through `proof`) approves or denies.
    ///
    /// Permission is checked before the user is looked up: whoever may not
    /// change `user`'s authorizations learns nothing of whether `user` exists.
    package func set(user: String, appID: String, to status: AuthorizationStatus,
                     requester: UserAccount, proof: GuardianProof) throws(GuardFailure) -> AuthorizationView {
        guard status != .notDetermined else {
            throw GuardFailure(.familyControls(.invalidArgument), "set takes approved or denied; use revoke to go back to not determined")
        }
        guard AppIdentity.isValidAppID(appID) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(appID.clipped)\" is not a valid app ID")
        }
        guard may(requester, administer: user) else {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may change \(user.clipped)'s authorizations")
        }
        guard Principal.isValidName(user), let account = try? UserDatabase.user(named: user) else {
            throw GuardFailure(.notFound, "no such user \(user.clipped)")
        }
        try authenticate(requester, .set, child: user, appID: appID, context: "set \(status)",
                         showing: "Set \(appID) for \(user) to \(status)"
                            + (status == .approved ? ": its folder will be locked." : "."), proof: proof)
        let key = StatusHub.Key(user: user, appID: appID)
        return try turns.save(key) { () throws(GuardFailure) -> AuthorizationView in
            let current = try ledger.authorization(user: user, appID: appID)
            let isChild: Bool
            do throws(Errno) {
                isChild = try family.isChild(account)
            } catch {
                throw GuardFailure(.networkError, "the user directory could not be reached to check the family: \(error)")
            }
            let member: FamilyControlsMember = isChild ? .child : .individual
            if let current, current.status == status, current.member == member { return try view(current) }
            let directory = try appDirectory(appID, for: account)
            let record = AuthorizationRecord(
                user: user, uid: account.uid, appID: appID, member: member, status: status,
                approvedBy: status == .approved ? requester.name : nil, updatedAt: .now, appPath: directory.path,
                appIdentity: directory.identity, displayName: current?.displayName)
            let audited = ledger.event(.set, actor: requester.name, user: user, appID: appID, member: member, outcome: AuditOutcome(rawValue: status.description))
            if status == .approved {
                try keeper.approve(record, directory: directory, audit: audited)
            } else {
                try ledger.commit(record, audit: audited)
            }
            logger.notice("set: \(appID) for \(user) is now \(status) (by \(requester.name))")
            if status != .approved, current?.status == .approved, current?.member == .child {
                keeper.release(user: user, appID: appID, actor: requester.name)
            }
            return try view(record)
        }
    }

    /// `familyctl revoke`: approved → not determined and unlocked, by root
    /// or by the child's guardian once authenticated through `proof`.
    package func revoke(user: String, appID: String, requester: UserAccount, proof: GuardianProof) throws(GuardFailure) {
        guard may(requester, administer: user) else {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may revoke \(user.clipped)'s authorizations")
        }
        guard try ledger.authorization(user: user, appID: appID) != nil else {
            throw GuardFailure(.notFound, "\(user.clipped) has no authorization for \(appID.clipped)")
        }
        try authenticate(requester, .revoke, child: user, appID: appID, context: "revoke",
                         showing: "Revoke \(appID) for \(user): its folder will no longer be protected from deletion.",
                         proof: proof)
        try turns.save(StatusHub.Key(user: user, appID: appID)) { () throws(GuardFailure) in
            try revoke(user: user, appID: appID, actor: requester.name)
        }
    }

    /// `familyctl graduate USER`: the child becomes an adult; every child approval
    /// is revoked and its lock released. Root only.
    package func graduate(user: String, requester: UserAccount, proof: GuardianProof) throws(GuardFailure) -> [String] {
        guard requester.uid == 0 else {
            throw GuardFailure(.permissionDenied, "only root may graduate a child")
        }
        // Root is never asked; should guardians ever graduate, they authenticate as for revoke.
        try authenticate(requester, .graduate, child: user, appID: nil, context: "graduate",
                         showing: "Graduate \(user): every child approval is revoked.", proof: proof)
        let all = try ledger.authorizations(user: user)
        if all.isEmpty { try requireKnown(user) }
        let records = all.filter { $0.member == .child && $0.status == .approved }
        var revoked: [String] = []
        for record in records {
            try turns.save(StatusHub.Key(user: user, appID: record.appID)) { () throws(GuardFailure) in
                try revoke(user: user, appID: record.appID, actor: requester.name, action: .graduate)
            }
            revoked.append(record.appID)
        }
        ledger.audit(.graduate, actor: requester.name, user: user, appID: nil, member: .child,
                    outcome: revoked.isEmpty ? .noApprovals : .graduated, detail: revoked.joined(separator: " "))
        logger.notice("graduate: \(user) by \(requester.name); revoked \(revoked.isEmpty ? "nothing" : revoked.joined(separator: ", "))")
        return revoked
    }

    /// Root may administer everyone; a guardian their own children.
    package func may(_ requester: UserAccount, administer user: String) -> Bool {
        if requester.uid == 0 { return true }
        return (try? family.isGuardian(requester, of: user)) == true
    }

    /// The first `ROOT/APPID` directory of `account`, opened (never through
    /// a link), which must be theirs and not open to everyone.
    private func appDirectory(_ appID: String, for account: UserAccount) throws(GuardFailure) -> OpenedDirectory {
        var problems: [String] = []
        for root in family.appRoots(for: account) {
            let path = "\(root)/\(appID)"
            guard let directory = try? OpenedDirectory.open(path) else { continue }
            if let problem = directory.ownershipProblem(uid: account.uid) {
                problems.append("\(path) cannot be an app directory: \(problem)")
                continue
            }
            return directory
        }
        let searched = family.appRoots(for: account).joined(separator: " or ")
        throw GuardFailure(.notFound, problems.first ?? "no app directory \(appID) under \(searched)")
    }
}

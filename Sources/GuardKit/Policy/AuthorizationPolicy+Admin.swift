import FamilyControlsModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// One authorization as administrators see it, with its lock.
package struct AuthorizationView: Hashable, Sendable {
    package var record: AuthorizationRecord
    /// `locked`, `unlocked`, `unenforced: REASON` (and `locking`/`unlocking` mid-way).
    package var lock: String
    /// The app directory's current path (it follows renames of the child's folders).
    package var path: String
}

extension AuthorizationPolicy {
    /// `revokeAuthorization` from the app itself: approved → not determined and
    /// unlocked; denied or not determined → no effect.
    ///
    /// A child's approval is released only after a guardian authenticates, as
    /// for the approval: the child can run the app's own program (or borrow its
    /// connection), so the app's word alone must never lift the lock.
    package func revoke(from caller: Caller, over channel: any RequestChannel) throws(GuardFailure) {
        try sheets.withExclusiveAccess(to: caller.account.name, onWait: {
            logger.info("revoke: \(caller.app.appID) for \(caller.account.name) waits for their open request to end")
        }) { () throws(GuardFailure) in
            let user = caller.account.name
            var actor = user
            var guardianAuthenticated = false
            if let current = try? store.authorization(user: user, appID: caller.app.appID),
               current.status == .approved, current.member == .child {
                let question = "Allow “\(caller.app.displayName)” to stop providing parental controls for \(user)? "
                    + "Its folder will no longer be protected from deletion."
                actor = try runPrompts(.child, caller: caller, channel: channel, question: question) { () throws(GuardFailure) in
                    audit(event(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                outcome: "refused", detail: "Don't Allow at the alert"))
                    throw .canceled("the approval of \(caller.app.displayName) stays")
                }
                guardianAuthenticated = true
            }
            try requests.withExclusiveAccess(to: caller.key) { () throws(GuardFailure) in
                // Approved for the child while no guardian was asked: not the app's to lift.
                if !guardianAuthenticated, let now = try? store.authorization(user: user, appID: caller.app.appID),
                   now.status == .approved, now.member == .child {
                    audit(event(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                outcome: "refused", detail: "approved meanwhile; lifting it takes a parent or guardian"))
                    throw .canceled("\(caller.app.displayName) was approved meanwhile; lifting that takes a parent or guardian")
                }
                try revoke(user: user, appID: caller.app.appID, actor: actor)
            }
        }
    }

    private func revoke(user: String, appID: String, actor: String, action: AuditAction = .revoke) throws(GuardFailure) {
        guard let current = try? store.authorization(user: user, appID: appID), current.status == .approved else {
            audit(event(action, actor: actor, user: user, appID: appID, member: nil, outcome: "no effect",
                        detail: "not approved"))
            return
        }
        try remove(user: user, appID: appID, audit: event(action, actor: actor, user: user, appID: appID,
                                                           member: current.member, outcome: "revoked"))
        logger.notice("\(action): \(appID) for \(user) by \(actor)")
        if current.member == .child { releaseLock(user: user, appID: appID, actor: actor) }
    }

    /// Every authorization the requester may see: all for root, their children's for a guardian.
    package func list(user: String?, requester: UserAccount) throws(GuardFailure) -> [AuthorizationView] {
        let records: [AuthorizationRecord]
        do throws(StoreError) {
            records = try store.authorizations(user: user)
        } catch {
            logger.error("store: cannot list authorizations: \(error)")
            throw .internalError("the Guard could not read its store; see its log")
        }
        return records.filter { may(requester, administer: $0.user) }.map(view)
    }

    private func view(_ record: AuthorizationRecord) -> AuthorizationView {
        let lock = locker.state(user: record.user, appID: record.appID, roots: appRoots(of: record.user))
        return AuthorizationView(record: record, lock: lock?.state.description ?? LockState.unlocked.description,
                                 path: lock?.path ?? record.appPath)
    }

    /// `familyctl set`: an administrator (or the child's guardian) approves or denies.
    package func set(user: String, appID: String, to status: AuthorizationStatus,
                     requester: UserAccount) throws(GuardFailure) -> AuthorizationView {
        guard status != .notDetermined else {
            throw GuardFailure(.familyControls(.invalidArgument), "set takes approved or denied; use revoke to go back to not determined")
        }
        guard AppIdentity.isValidAppID(appID) else {
            throw GuardFailure(.familyControls(.invalidArgument), "\"\(appID.clipped)\" is not a valid app ID")
        }
        guard Principal.isValidName(user), let account = try? UserDatabase.user(named: user) else {
            throw GuardFailure(.notFound, "no such user \(user.clipped)")
        }
        guard may(requester, administer: user) else {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user) may change \(user)'s authorizations")
        }
        let key = StatusHub.Key(user: user, appID: appID)
        return try requests.withExclusiveAccess(to: key) { () throws(GuardFailure) -> AuthorizationView in
            let current = try? store.authorization(user: user, appID: appID)
            let isChild: Bool
            do throws(Errno) {
                isChild = try family.isChild(account)
            } catch {
                throw GuardFailure(.networkError, "the user directory could not be reached to check the family: \(error)")
            }
            guard let directory = current?.appPath ?? appDirectory(appID, for: account) else {
                throw GuardFailure(.notFound, "no app directory \(appID) under \(family.appRoots(for: account).joined(separator: " or "))")
            }
            let member: FamilyControlsMember = isChild ? .child : .individual
            let record = AuthorizationRecord(
                user: user, uid: account.uid, appID: appID, member: member, status: status,
                approvedBy: status == .approved ? requester.name : nil, updatedAt: Date(), appPath: directory)
            if current?.status == status && current?.member == member { return view(current ?? record) }
            try commit(record, audit: event(.set, actor: requester.name, user: user, appID: appID, member: member,
                                            outcome: status.description))
            logger.notice("set: \(appID) for \(user) is now \(status) (by \(requester.name))")
            if status == .approved && member == .child {
                applyLock(record)
            } else if current?.status == .approved && current?.member == .child {
                releaseLock(user: user, appID: appID, actor: requester.name)
            }
            return view(record)
        }
    }

    /// `familyctl revoke`: approved → not determined and unlocked.
    package func revoke(user: String, appID: String, requester: UserAccount) throws(GuardFailure) {
        guard may(requester, administer: user) else {
            throw GuardFailure(.permissionDenied, "only root or a guardian of \(user.clipped) may revoke \(user.clipped)'s authorizations")
        }
        guard (try? store.authorization(user: user, appID: appID)) != nil else {
            throw GuardFailure(.notFound, "\(user.clipped) has no authorization for \(appID.clipped)")
        }
        try requests.withExclusiveAccess(to: StatusHub.Key(user: user, appID: appID)) { () throws(GuardFailure) in
            try revoke(user: user, appID: appID, actor: requester.name)
        }
    }

    /// `familyctl graduate USER`: the child becomes an adult; every child approval
    /// is revoked and its lock released. Root only.
    package func graduate(user: String, requester: UserAccount) throws(GuardFailure) -> [String] {
        guard requester.uid == 0 else {
            throw GuardFailure(.permissionDenied, "only root may graduate a child")
        }
        let records = ((try? store.authorizations(user: user)) ?? []).filter { $0.member == .child && $0.status == .approved }
        var revoked: [String] = []
        for record in records {
            try requests.withExclusiveAccess(to: StatusHub.Key(user: user, appID: record.appID)) { () throws(GuardFailure) in
                try revoke(user: user, appID: record.appID, actor: requester.name, action: .graduate)
            }
            revoked.append(record.appID)
        }
        audit(event(.graduate, actor: requester.name, user: user, appID: nil, member: .child,
                    outcome: revoked.isEmpty ? "no approvals" : "graduated", detail: revoked.joined(separator: " ")))
        logger.notice("graduate: \(user) by \(requester.name); revoked \(revoked.isEmpty ? "nothing" : revoked.joined(separator: ", "))")
        return revoked
    }

    /// Checks every lock against the store; with `repair`, fixes drift. Root only
    /// when asked by a client; the Guard runs it at start.
    package func verifyLocks(repair: Bool, actor: String = AuditEvent.guardActor) throws(GuardFailure) -> [String] {
        let approved = ((try? store.authorizations()) ?? [])
            .filter { $0.member == .child && $0.status == .approved }
            .map { ApprovedApp(user: $0.user, appID: $0.appID, directory: $0.appPath, roots: appRoots(of: $0.user)) }
        do {
            let findings = try locker.verify(approved: approved, repair: repair)
            for finding in findings { logger.warning("locks: \(finding)") }
            if !findings.isEmpty {
                audit(event(.repair, actor: actor, user: "*", appID: nil, member: nil,
                            outcome: repair ? "repaired" : "drift found", detail: findings.joined(separator: "; ")))
            }
            return findings
        } catch {
            logger.error("locks: verification failed: \(error)")
            throw .internalError("lock verification failed: \(error)")
        }
    }

    /// Start-up reconcile: the store is the truth; every approved child app is locked,
    /// every other lock released. Logs what it repaired.
    package func reconcile() {
        do throws(GuardFailure) {
            let findings = try verifyLocks(repair: true)
            logger.info(findings.isEmpty ? "reconcile: every lock matches the store"
                                         : "reconcile: repaired \(findings.count) problem(s)")
        } catch {
            logger.error("reconcile: \(error.message)")
        }
        for user in childrenWhoLeft() {
            logger.warning("\(user) is no longer a child in the family but still has approved child apps; "
                + "run `familyctl graduate \(user)` to release them")
        }
    }

    /// Root may administer everyone; a guardian their own children.
    func may(_ requester: UserAccount, administer user: String) -> Bool {
        if requester.uid == 0 { return true }
        return (try? family.isGuardian(requester, of: user)) == true
    }

    /// `user`'s app roots, expanded; none when NSS no longer knows the user.
    func appRoots(of user: String) -> [String] {
        guard let account = try? UserDatabase.user(named: user) else { return [] }
        return family.appRoots(for: account)
    }

    /// The first `ROOT/APPID` directory that exists for `account`.
    private func appDirectory(_ appID: String, for account: UserAccount) -> String? {
        for root in family.appRoots(for: account) {
            var info = stat()
            let path = "\(root)/\(appID)"
            if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR { return path }
        }
        return nil
    }
}

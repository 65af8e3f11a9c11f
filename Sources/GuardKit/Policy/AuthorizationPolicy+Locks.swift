import FamilyControlsModel
import SystemKit
import LockEngine

// Keeping every approved child app locked, and nothing else.
extension AuthorizationPolicy {
    /// Records an approval; a child's is locked first, on `directory`, the
    /// directory that was identified.
    ///
    /// A lock that fails leaves the app as it was and the approval
    /// unrecorded: the request fails. A lock that holds only partly
    /// (`unenforced`) is recorded with the approval and said wherever the
    /// approval is shown. An approval that cannot be recorded is unlocked again.
    /// Call with the (user, app) entry of ``requests`` held.
    func approve(_ record: AuthorizationRecord, directory: OpenedDirectory?, audit approval: AuditEvent) throws(GuardFailure) {
        guard record.member == .child else {
            try commit(record, audit: approval)
            return
        }
        guard let directory else {
            throw GuardFailure(.unavailable, "the app folder of \(record.appID) could not be opened to lock it")
        }
        let report: LockReport
        do {
            report = try locker.lock(user: record.user, appID: record.appID, directory: directory)
        } catch {
            audit(event(.lock, actor: AuditEvent.guardActor, user: record.user, appID: record.appID,
                        member: .child, outcome: "failed", detail: "\(error)"))
            logger.error("lock: cannot lock \(directory.path) for \(record.user): \(error); the approval is not recorded")
            throw GuardFailure(.unavailable, "the app folder could not be locked, so it was not approved: \(error)")
        }
        do throws(GuardFailure) {
            try commit(record, audit: approval)
        } catch {
            releaseLock(user: record.user, appID: record.appID, actor: AuditEvent.guardActor)
            throw error
        }
        audit(event(.lock, actor: AuditEvent.guardActor, user: record.user, appID: record.appID,
                    member: .child, outcome: report.state.description))
        if case .unenforced(let reason) = report.state {
            logger.warning("lock: \(record.appID) for \(record.user) is approved but NOT locked: \(reason)")
        } else {
            logger.info("lock: \(DisplayText.sanitized(report.record.path)) is \(report.state)")
        }
    }

    /// Releases a lock after a revoke; the revoke stands whatever the unlock's fate.
    func releaseLock(user: String, appID: String, actor: String) {
        let roots = appRoots(of: user)
        do {
            guard try locker.state(user: user, appID: appID, roots: roots) != nil else { return }
            let findings = try locker.unlock(user: user, appID: appID, roots: roots)
            audit(event(.unlock, actor: actor, user: user, appID: appID, member: .child, outcome: "unlocked",
                        detail: findings.isEmpty ? nil : findings.joined(separator: "; ")))
            for finding in findings { logger.warning("unlock: \(appID) for \(user): \(finding)") }
            logger.info("unlock: \(appID) for \(user) restored")
        } catch {
            audit(event(.unlock, actor: actor, user: user, appID: appID, member: .child, outcome: "failed", detail: "\(error)"))
            logger.error("unlock: cannot unlock \(appID) for \(user): \(error)")
        }
    }

    /// Checks every lock against the store; with `repair`, fixes drift. One
    /// app's failure is a finding, and the others are still checked. Root only
    /// when asked by a client; the Guard runs it at start.
    ///
    /// Each app is checked with its (user, app) entry of ``requests`` held and
    /// its record read again, so a decision made meanwhile is never undone.
    package func verifyLocks(repair: Bool, actor: String = AuditEvent.guardActor) throws(GuardFailure) -> [String] {
        var findings: [String] = []
        if repair {
            do {
                findings += try locker.resume()
            } catch {
                logger.error("locks: cannot read the lock journal: \(error)")
                throw .internalError("the Guard could not read its lock journal; see its log")
            }
        }
        let approved = try authorizations().filter { $0.member == .child && $0.status == .approved }
        for record in approved {
            let key = StatusHub.Key(user: record.user, appID: record.appID)
            findings += try requests.withExclusiveAccess(to: key) { () throws(GuardFailure) -> [String] in
                guard let now = try authorization(user: record.user, appID: record.appID),
                      now.member == .child, now.status == .approved else { return [] }
                let app = ApprovedApp(user: now.user, appID: now.appID, directory: now.appPath,
                                      identity: now.appIdentity, roots: appRoots(of: now.user))
                do {
                    return try locker.check(app, repair: repair)
                } catch {
                    return ["\(now.appID) for \(now.user): \(error)"]
                }
            }
        }
        let wanted = Set(approved.map { StatusHub.Key(user: $0.user, appID: $0.appID) })
        let locked: [StatusHub.Key]
        do {
            locked = try locker.lockedApps().map { StatusHub.Key(user: $0.user, appID: $0.appID) }
        } catch {
            logger.error("locks: cannot read the lock journal: \(error)")
            throw .internalError("the Guard could not read its lock journal; see its log")
        }
        for key in locked where !wanted.contains(key) {
            findings += try requests.withExclusiveAccess(to: key) { () throws(GuardFailure) -> [String] in
                if let now = try authorization(user: key.user, appID: key.appID), now.member == .child,
                   now.status == .approved { return [] }
                let label = "\(key.appID) for \(key.user)"
                guard repair else { return ["\(label) is locked without an approval"] }
                do {
                    let unlocked = try locker.unlock(user: key.user, appID: key.appID, roots: appRoots(of: key.user))
                    return ["\(label) was locked without an approval; released"] + unlocked.map { "\(label): \($0)" }
                } catch {
                    return ["\(label) is locked without an approval and could not be released: \(error)"]
                }
            }
        }
        for finding in findings { logger.warning("locks: \(finding)") }
        if !findings.isEmpty {
            audit(event(.repair, actor: actor, user: "*", appID: nil, member: nil,
                        outcome: repair ? "repaired" : "drift found", detail: findings.joined(separator: "; ")))
        }
        return findings
    }

    /// Start-up reconcile: the store is the truth; every approved child app is locked,
    /// every other lock released. Logs what it repaired. Runs beside serving.
    package func reconcile() {
        do throws(GuardFailure) {
            let findings = try verifyLocks(repair: true)
            logger.info(findings.isEmpty ? "reconcile: every lock matches the store"
                                         : "reconcile: repaired or reported \(findings.count) problem(s)")
        } catch {
            logger.error("reconcile: \(error.message)")
        }
        warnAboutChildrenWhoLeft()
    }
}

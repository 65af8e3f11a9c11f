#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import Synchronization
import SystemKit
import GuardFlatpak
import GuardIdentity
import GuardStore

/// Keeps every approved child app locked, and nothing else: locks before an
/// approval is recorded, releases after a revoke, and checks and repairs at
/// start and on `familyctl locks verify`.
package final class LockKeeper: Sendable {
    let locker: any AppLocker
    let ledger: AuthorizationLedger
    let families: FamilyState
    let logger: Logger
    /// Decisions on one (user, app) are saved (and locked or unlocked) one at a time.
    let turns: AppTurns
    /// The apps whose staged version is locked for an update under way: a
    /// check leaves that lock alone, though no approval covers it.
    let updatesUnderWay = Mutex<Set<StatusHub.Key>>([])

    /// The Guard's state folder, for a move run in a helper (its journal).
    let stateDirectory: String

    init(locker: any AppLocker, ledger: AuthorizationLedger, families: FamilyState, logger: Logger,
         turns: AppTurns, stateDirectory: String) {
        self.stateDirectory = stateDirectory
        self.locker = locker
        self.ledger = ledger
        self.families = families
        self.logger = logger
        self.turns = turns
    }

    /// Records an approval; a child's is locked first, on `directory`, the
    /// directory that was identified.
    ///
    /// A lock that fails leaves the app as it was and the approval
    /// unrecorded: the request fails. A lock that holds only partly
    /// (`unenforced`) is recorded with the approval and said wherever the
    /// approval is shown. An approval that cannot be recorded is unlocked again.
    /// Call in the (user, app) save turn (``AppTurns/save(_:_:)``).
    /// A child's per-user Flatpak app is instead moved into the Guard's
    /// installation when the move service's socket exists (``moveFlatpak(_:)``),
    /// and then needs no lock.
    /// - Returns: the record as recorded (for a moved app, of the Guard's installation).
    @discardableResult
    func approve(_ record: AuthorizationRecord, directory: OpenedDirectory?,
                 audit approval: AuditEvent) throws(GuardFailure) -> AuthorizationRecord {
        if record.member == .child, let moved = try moveFlatpak(record) {
            do throws(GuardFailure) {
                try ledger.commit(moved, audit: approval)
            } catch {
                // The move stands (one copy of the app is always installed); only the approval is lost.
                logger.error("flatpak: \(record.appID) for \(record.user) was moved into the Guard's installation, "
                    + "but its approval could not be recorded (\(error)); it stays there unapproved")
                throw error
            }
            return moved
        }
        let record = try pinnedToItsCommit(record)
        guard record.member == .child, Self.needsLock(record) else {
            try ledger.commit(record, audit: approval)
            return record
        }
        guard let directory else {
            throw GuardFailure(.unavailable, "the app folder of \(record.appID) could not be opened to lock it")
        }
        let report: LockReport
        do {
            report = try locker.lock(user: record.user, appID: record.appID, directory: directory,
                                     linksOutsideAllowed: record.flatpak != nil)
        } catch {
            ledger.audit(.lock, actor: AuditEvent.guardActor, user: record.user, appID: record.appID,
                         member: .child, outcome: .failed, detail: "\(error)")
            logger.error("lock: cannot lock \(directory.path) for \(record.user): \(error); the approval is not recorded")
            throw GuardFailure(.unavailable, "the app folder could not be locked, so it was not approved: \(error)")
        }
        do throws(GuardFailure) {
            try ledger.commit(record, audit: approval)
        } catch {
            release(user: record.user, appID: record.appID, actor: AuditEvent.guardActor)
            throw error
        }
        ledger.audit(.lock, actor: AuditEvent.guardActor, user: record.user, appID: record.appID,
                     member: .child, outcome: AuditOutcome(rawValue: report.state.description))
        if case .unenforced(let reason) = report.state {
            logger.warning("lock: \(record.appID) for \(record.user) is approved but NOT locked: \(reason)")
        } else {
            logger.info("lock: \(DisplayText.sanitized(report.record.path)) is \(report.state)")
        }
        return record
    }

    /// A child's app approved where it already is in the Guard's installation
    /// (asked there, not moved by this approval) is approved at its deployed
    /// commit and the remote that gave it, as a moved app is, so that a later
    /// commit is judged as an update instead of running as approved.
    /// - Throws: `Restricted` when no remote of the installation gives that
    ///   commit (one installed from a file, say): its updates could not be judged.
    private func pinnedToItsCommit(_ record: AuthorizationRecord) throws(GuardFailure) -> AuthorizationRecord {
        guard record.member == .child, record.flatpakOrigin == nil, let deployment = record.flatpak,
              deployment.installation.path == families.current.configuration.flatpakGuardInstallation else { return record }
        let seed = FlatpakApproval(appID: deployment.appID, arch: deployment.arch, branch: deployment.branch,
                                   remote: "", url: "", commit: deployment.commit, timestamp: 0)
        let judge = FlatpakUpdateJudge(installation: GuardFlatpakInstallation(path: deployment.installation.path),
                                       trusted: trustedFlatpakRemotes)
        guard let pinned = judge.candidate(after: seed, commit: deployment.commit) else {
            throw GuardFailure(.restricted, "no remote of the Guard's Flatpak installation gives commit "
                + "\(deployment.commit) of \(deployment.appID), so its updates could not be judged; it was not approved")
        }
        var result = record
        result.flatpakOrigin = pinned.origin
        return result
    }

    /// Moves an approved app of a child's per-user Flatpak installation into
    /// the Guard's, through the move service (``FlatpakMoveClient``) when
    /// `[Flatpak] MoveService=` names a socket that exists, else (no
    /// systemd) in a helper process of the Guard's own binary.
    /// - Returns: the record of the moved app (the Guard's installation, the
    ///   same commit, its remote and time), or nil where the app is locked in
    ///   place instead: not a per-user Flatpak app, or `MoveService=no`.
    /// - Throws: `Unavailable` when the move fails: the app stays where it
    ///   was, unapproved.
    func moveFlatpak(_ record: AuthorizationRecord) throws(GuardFailure) -> AuthorizationRecord? {
        guard let deployment = record.flatpak, case .user(let uid) = deployment.installation.kind else { return nil }
        let configuration = families.current.configuration
        guard let socket = configuration.flatpakMoveService else {
            logger.info("flatpak: \(record.appID) for \(record.user) is locked in place ([Flatpak] MoveService=no)")
            return nil
        }
        let suffix = "/.local/share/flatpak"
        guard deployment.installation.path.hasSuffix(suffix) else {
            throw GuardFailure(.unavailable, "\(deployment.installation.path) is not a per-user Flatpak installation")
        }
        let home = String(deployment.installation.path.dropLast(suffix.count))
        let opened: OpenedDirectory
        do {
            opened = try OpenedDirectory.open(deployment.path)
        } catch {
            throw GuardFailure(.unavailable, "the deployment of \(record.appID) could not be opened to move it: \(error)")
        }
        let request = FlatpakMoveRequest(uid: uid, home: home, appID: deployment.appID, arch: deployment.arch,
                                         branch: deployment.branch, commit: deployment.commit, deployment: opened.status,
                                         trusted: trustedFlatpakRemotes)
        let approval: FlatpakApproval
        do {
            if access(socket, F_OK) == 0 {
                approval = try FlatpakMoveClient(socketPath: socket).move(request)
            } else {
                logger.info("flatpak: no move service at \(socket); \(record.appID) for \(record.user) is moved by a helper")
                // The helper's Flatpak reads the Guard's own Flatpak configuration (FLATPAK_CONFIG_DIR, else /etc/flatpak).
                let flatpakConfiguration = getenv("FLATPAK_CONFIG_DIR").map { ["--flatpak-config-dir", String(cString: $0)] } ?? []
                let options = ["--state-dir", stateDirectory, "--installation-path", configuration.flatpakGuardInstallation]
                    + flatpakConfiguration
                let client = FlatpakMoveClient(socketPath: socket)
                // As the service's unit does first: a move a kill interrupted is finished or undone.
                for line in try client.recoverInHelper(arguments: options) {
                    logger.notice("flatpak: recovered: \(DisplayText.sanitized(line))")
                }
                approval = try client.moveInHelper(request, arguments: options)
            }
        } catch {
            ledger.audit(.lock, actor: AuditEvent.guardActor, user: record.user, appID: record.appID,
                         member: .child, outcome: .failed, detail: "move into the Guard's Flatpak installation: \(error)")
            logger.error("flatpak: cannot move \(record.appID) for \(record.user): \(error); the approval is not recorded")
            throw GuardFailure(.unavailable, "the app could not be moved into the Guard's Flatpak installation, "
                + "so it was not approved: \(error)")
        }
        let installation = FlatpakInstallation(path: configuration.flatpakGuardInstallation, kind: .system)
        let moved = FlatpakDeployment(installation: installation, kind: .app, appID: approval.appID, arch: approval.arch,
                                      branch: approval.branch, commit: approval.commit)
        let folderPath = FlatpakLockPlacement.folder(of: moved)
        let folder: OpenedDirectory
        do {
            folder = try OpenedDirectory.open(folderPath)
        } catch {
            throw GuardFailure(.unavailable, "\(folderPath), where \(record.appID) was moved, cannot be opened: \(error)")
        }
        if let problem = FlatpakSandbox.ownershipProblem(folder.status, of: installation) {
            throw GuardFailure(.unavailable, "\(folderPath), where \(record.appID) was moved: \(problem)")
        }
        var result = record
        result.flatpak = moved
        result.flatpakOrigin = approval.origin
        result.appPath = folderPath
        result.appIdentity = folder.identity
        logger.notice("flatpak: \(record.appID) for \(record.user) moved into the Guard's installation "
            + "\(installation.path) at commit \(approval.commit) from remote \(approval.remote); no lock needed")
        return result
    }

    /// Whether an approval of `record`'s app is locked at all: not one in a
    /// root-owned Flatpak installation, which the child cannot change.
    static func needsLock(_ record: AuthorizationRecord) -> Bool {
        record.flatpak.map(FlatpakLockPlacement.needsLock) ?? true
    }

    /// Releases a lock after a revoke; the revoke stands whatever the unlock's fate.
    func release(user: String, appID: String, actor: String) {
        let roots = appRoots(of: user)
        do {
            guard try locker.state(user: user, appID: appID, roots: roots) != nil else { return }
            let findings = try locker.unlock(user: user, appID: appID, roots: roots)
            ledger.audit(.unlock, actor: actor, user: user, appID: appID, member: .child, outcome: .unlocked,
                         detail: findings.isEmpty ? nil : findings.joined(separator: "; "))
            for finding in findings { logger.warning("unlock: \(appID) for \(user): \(finding)") }
            logger.info("unlock: \(appID) for \(user) restored")
        } catch {
            ledger.audit(.unlock, actor: actor, user: user, appID: appID, member: .child, outcome: .failed, detail: "\(error)")
            logger.error("unlock: cannot unlock \(appID) for \(user): \(error)")
        }
    }

    /// The lock's state and current path, as `familyctl status` shows it.
    /// - Throws: when the journal cannot be read.
    func state(of record: AuthorizationRecord) throws(GuardFailure) -> (lock: ShownLock, path: String) {
        let lock: (state: LockState, path: String)?
        do {
            lock = try locker.state(user: record.user, appID: record.appID, roots: appRoots(of: record.user))
        } catch {
            logger.error("store: cannot read the lock of \(record.appID) for \(record.user): \(error)")
            throw .internalError("the Guard could not read its lock journal; see its log")
        }
        var shown = ShownLock.journaled(lock?.state ?? .unlocked)
        if record.member == .child, record.status == .approved, lock == nil {
            shown = Self.needsLock(record) ? .missing : .notNeeded
        }
        return (shown, lock?.path ?? record.appPath)
    }

    /// Checks every lock against the store; with `repair`, fixes drift. One
    /// app's failure is a finding, and the others are still checked.
    ///
    /// Each app is checked in its (user, app) save turn (``AppTurns``) with
    /// its record read again, so a decision made meanwhile is never undone.
    package func verify(repair: Bool, actor: String = AuditEvent.guardActor) throws(GuardFailure) -> [String] {
        var findings: [String] = []
        if repair {
            do {
                findings += try locker.resume()
            } catch {
                logger.error("locks: cannot read the lock journal: \(error)")
                throw .internalError("the Guard could not read its lock journal; see its log")
            }
            findings += try finishSwappedUpdates()
        }
        let approved = try ledger.authorizations().filter { $0.member == .child && $0.status == .approved && Self.needsLock($0) }
        for record in approved {
            let key = StatusHub.Key(user: record.user, appID: record.appID)
            findings += try turns.save(key) { () throws(GuardFailure) -> [String] in
                guard let now = try ledger.authorization(user: record.user, appID: record.appID),
                      now.member == .child, now.status == .approved else { return [] }
                let app = ApprovedApp(user: now.user, appID: now.appID, directory: now.appPath,
                                      identity: now.appIdentity, roots: appRoots(of: now.user),
                                      linksOutsideAllowed: now.flatpak != nil)
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
            findings += try turns.save(key) { () throws(GuardFailure) -> [String] in
                if updatesUnderWay.withLock({ $0.contains(key) }) { return [] }
                if let now = try ledger.authorization(user: key.user, appID: key.appID), now.member == .child,
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
            ledger.audit(.repair, actor: actor, user: "*", appID: nil, member: nil,
                         outcome: repair ? .repaired : .driftFound, detail: findings.joined(separator: "; "))
        }
        return findings
    }

    /// `user`'s app roots, expanded, and the `app` folder of their own
    /// Flatpak installation: where a lock's folder may be found again if it
    /// moved. None when NSS no longer knows the user.
    func appRoots(of user: String) -> [String] {
        guard let account = try? UserDatabase.user(named: user) else { return [] }
        return families.current.appRoots(for: account)
            + [FlatpakInstallation.user(home: account.home, uid: account.uid).path + "/app"]
    }
}

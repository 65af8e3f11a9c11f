import FamilyControlsModel
import GuardProtocol
import LockEngine
import Synchronization
import SystemKit
import GuardIdentity
import GuardStore

/// The authorizations and their audit trail: the store, read so that a
/// failure is an error and never "nothing recorded", an in-memory copy of
/// every status for the frequent status calls, and the subscribers told of
/// every change.
package final class AuthorizationLedger: Sendable {
    /// What the status cache keeps per (user, app).
    struct Cached: Hashable, Sendable {
        var status: AuthorizationStatus
        var member: FamilyControlsMember
        /// The approved directory, for a child's approval.
        var directory: FileIdentity?
        /// For an app in the Guard's Flatpak installation (whose `app/ID`
        /// folder stays the same from commit to commit), the approved
        /// deployment: another commit there has not been approved.
        var deployment: FlatpakDeployment?
        /// And the runtime commit approved with it, when one is recorded.
        var runtimeCommit: String?
    }

    package let store: Store
    let logger: Logger
    /// Denials kept per user; older ones are forgotten.
    let maximumDenialsPerUser: Int
    private let hub = StatusHub()
    /// Told of every change of an authorization (the monitors' keeper).
    private let changeListeners = Mutex<[@Sendable () -> Void]>([])
    private let statuses: Mutex<[StatusHub.Key: Cached]>
    /// How long audit events are kept (`[Audit] Retention=`), read when pruning.
    private let retention: @Sendable () -> Duration?
    /// When the audit trail was last pruned; it is pruned at most hourly.
    private let lastPrune = Mutex<MonotonicInstant?>(nil)

    init(store: Store, logger: Logger, maximumDenialsPerUser: Int, limits: GuardLimits = GuardLimits(),
         retention: @escaping @Sendable () -> Duration? = { nil }) throws(StoreError) {
        repeatWindow = limits.auditRepeatWindow
        repeatCandidates = limits.auditRepeatCandidates
        self.store = store
        self.logger = logger
        self.maximumDenialsPerUser = maximumDenialsPerUser
        self.retention = retention
        var cache: [StatusHub.Key: Cached] = [:]
        for record in try store.authorizations() {
            cache[StatusHub.Key(user: record.user, appID: record.appID)] = Cached(record)
        }
        statuses = Mutex(cache)
    }

    /// The status of `appID` for `user` as the program of `directory` sees it,
    /// from memory. A child's approval answers only the directory that was
    /// approved: a copy elsewhere, or another folder put at the same path,
    /// has never been decided.
    package func status(user: String, appID: String, directory: FileIdentity,
                        flatpak: FlatpakDeployment? = nil, runtime: FlatpakDeployment? = nil) -> AuthorizationStatus {
        guard let cached = statuses.withLock({ $0[StatusHub.Key(user: user, appID: appID)] }) else { return .notDetermined }
        if cached.status == .approved, cached.member == .child,
           cached.directory != directory || !Self.isApprovedDeployment(cached.deployment, running: flatpak)
            || !Self.isApprovedRuntime(cached.runtimeCommit, running: runtime) {
            return .notDetermined
        }
        return cached.status
    }

    /// Whether `running` is the deployment `approved` names: always when the
    /// approval names none (an app root, or a Flatpak app locked in place,
    /// whose files cannot change).
    static func isApprovedDeployment(_ approved: FlatpakDeployment?, running: FlatpakDeployment?) -> Bool {
        guard let approved else { return true }
        return running?.commit == approved.commit && running?.installation.path == approved.installation.path
    }

    /// Whether `running` is the runtime commit approved, when one is recorded.
    static func isApprovedRuntime(_ approved: String?, running: FlatpakDeployment?) -> Bool {
        guard let approved else { return true }
        return running?.commit == approved
    }

    /// Watches the status of (user, app); `listener` runs on the thread that made the change.
    package func subscribe(user: String, appID: String, _ listener: @escaping StatusHub.Listener) -> (StatusHub.Key, Int) {
        hub.add(StatusHub.Key(user: user, appID: appID), listener)
    }

    package func unsubscribe(_ token: (StatusHub.Key, Int)) { hub.remove(token) }

    /// Calls `listener` after every change of any authorization, on the thread that made it.
    package func whenChanged(_ listener: @escaping @Sendable () -> Void) {
        changeListeners.withLock { $0.append(listener) }
    }

    // MARK: Reading

    /// The authorization of (user, app), or nil when none is recorded.
    /// - Throws: `unavailable` when the store cannot be read.
    package func authorization(user: String, appID: String) throws(GuardFailure) -> AuthorizationRecord? {
        do throws(StoreError) {
            return try store.authorization(user: user, appID: appID)
        } catch {
            throw failure(error, reading: "the authorization of \(appID) for \(user)")
        }
    }

    /// Every authorization, or `user`'s.
    /// - Throws: `unavailable` when the store cannot be read.
    package func authorizations(user: String? = nil) throws(GuardFailure) -> [AuthorizationRecord] {
        do throws(StoreError) {
            return try store.authorizations(user: user)
        } catch {
            throw failure(error, reading: "the authorizations")
        }
    }

    private func failure(_ error: StoreError, reading what: String) -> GuardFailure {
        logger.error("store: cannot read \(what): \(error)")
        return .internalError("the Guard could not read its store; see its log")
    }

    // MARK: Writing

    /// Records `record` with its audit row in one transaction, updates the
    /// in-memory status, and tells subscribers when the status changed. A
    /// denial beyond ``maximumDenialsPerUser`` for its user makes the store
    /// forget that user's oldest.
    func commit(_ record: AuthorizationRecord, audit: AuditEvent) throws(GuardFailure) {
        var id: Int64?
        do throws(StoreError) {
            if record.status == .denied {
                let forgotten = try store.saveDenial(record, audit: audit, keeping: maximumDenialsPerUser)
                for appID in forgotten {
                    logger.info("\(record.user) has more than \(maximumDenialsPerUser) denied apps; "
                        + "forgot the oldest denial, of \(appID)")
                    changeStatus(StatusHub.Key(user: record.user, appID: appID), to: nil)
                }
            } else {
                id = try store.save(record, audit: audit)
            }
        } catch {
            logger.error("store: cannot record \(audit.action) of \(record.appID) for \(record.user): \(error)")
            throw .internalError("the Guard could not record the decision; see its log")
        }
        changeStatus(StatusHub.Key(user: record.user, appID: record.appID), to: Cached(record))
        AuditForwarder.send(audit, id: id)
    }

    /// Removes the authorization (back to not determined) with its audit row.
    func remove(user: String, appID: String, audit: AuditEvent) throws(GuardFailure) {
        do throws(StoreError) {
            try store.deleteAuthorization(user: user, appID: appID, audit: audit)
        } catch {
            logger.error("store: cannot record \(audit.action) of \(appID) for \(user): \(error)")
            throw .internalError("the Guard could not record the decision; see its log")
        }
        changeStatus(StatusHub.Key(user: user, appID: appID), to: nil)
        AuditForwarder.send(audit, id: nil)
    }

    private func changeStatus(_ key: StatusHub.Key, to cached: Cached?) {
        let previous = statuses.withLock { cache in
            let old = cache[key]
            cache[key] = cached
            return old
        }
        if previous != cached { hub.publish(key, cached?.status ?? .notDetermined) }
        for listener in changeListeners.withLock({ $0 }) { listener() }
    }

    // MARK: Audit

    /// An audit row, now.
    package func event(_ action: AuditAction, actor: String, user: String, appID: String?, member: FamilyControlsMember?,
               outcome: AuditOutcome, detail: String? = nil) -> AuditEvent {
        AuditEvent(at: .now, actor: actor, action: action, user: user, appID: appID, member: member,
                   outcome: outcome, detail: detail)
    }

    /// Appends an audit row; a failure is logged, never fatal to the request.
    /// An event that changed nothing, again within ``repeatWindow`` and among
    /// the user's latest ``repeatCandidates`` rows, is counted on its first row instead.
    package func audit(_ action: AuditAction, actor: String, user: String, appID: String?, member: FamilyControlsMember?,
               outcome: AuditOutcome, detail: String? = nil) {
        let row = event(action, actor: actor, user: user, appID: appID, member: member, outcome: outcome, detail: detail)
        var id: Int64?
        do throws(StoreError) {
            id = try store.appendAudit(row, coalescingWithin: outcome.changesNothing ? repeatWindow : nil,
                                       amongLatest: repeatCandidates)
        } catch {
            logger.error("store: cannot append audit \(row.action) for \(row.user): \(error)")
        }
        AuditForwarder.send(row, id: id)
        pruneAuditIfDue()
    }

    /// How long after an event that changed nothing the same event again is
    /// counted on its row, in seconds (``GuardLimits/auditRepeatWindow``).
    let repeatWindow: Double
    /// How many of the user's latest rows a repeat is looked for among
    /// (``GuardLimits/auditRepeatCandidates``).
    let repeatCandidates: Int

    /// Deletes audit events older than `[Audit] Retention=`, at most once an hour.
    func pruneAuditIfDue(now: MonotonicInstant = .now) {
        let due = lastPrune.withLock { last in
            guard last.map({ now - $0 >= .seconds(3600) }) ?? true else { return false }
            last = now
            return true
        }
        guard due, let keep = retention() else { return }
        let cutoff = UnixTime.now.seconds - Double(keep.components.seconds)
        do throws(StoreError) {
            let removed = try store.pruneAudit(before: cutoff)
            if removed > 0 {
                logger.notice("audit: removed \(removed) event\(removed == 1 ? "" : "s") older than "
                    + "\(keep.components.seconds / 86_400) days ([Audit] Retention=)")
            }
        } catch {
            logger.error("audit: cannot remove old events: \(error)")
        }
    }
}

extension AuthorizationLedger.Cached {
    init(_ record: AuthorizationRecord) {
        self.init(status: record.status, member: record.member, directory: record.appIdentity,
                  deployment: record.flatpakOrigin == nil ? nil : record.flatpak,
                  runtimeCommit: record.flatpakOrigin?.runtime?.commit)
    }
}

import FamilyControlsModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import FamilyConfiguration
import LockEngine
import PAM

/// The Guard's decisions: the authorization state machine per (user, app),
/// following Apple's reference text clause by clause.
///
/// The store is the truth; an in-memory copy of every status answers the
/// frequent status calls without touching the database. Requests run on
/// threads of their own (they block on people and on PAM).
package final class AuthorizationPolicy: Sendable {
    package struct Settings: Sendable {
        /// A pam.d folder to read instead of `/etc/pam.d` (tests, staging).
        package var pamDirectory: String?
        /// Denials kept per user; older ones are forgotten.
        package var maximumDenialsPerUser: Int
        package init(pamDirectory: String? = nil, maximumDenialsPerUser: Int = 32) {
            self.pamDirectory = pamDirectory
            self.maximumDenialsPerUser = maximumDenialsPerUser
        }
    }

    /// What the status cache keeps per (user, app).
    struct Cached: Hashable, Sendable {
        var status: AuthorizationStatus
        var member: FamilyControlsMember
        /// The approved directory, for a child's approval.
        var directory: FileIdentity?
    }

    let store: Store
    let locker: any AppLocker
    let hub = StatusHub()
    let settings: Settings
    let logger: Logger
    let authenticator = PAMAuthenticator()
    /// Decisions on one (user, app) are saved (and locked or unlocked) one at a time.
    let requests = KeyedSerializer<StatusHub.Key>()
    /// One request or app revoke per user at a time, whatever the app, so one
    /// authentication sheet is open per user: a child cannot guess in parallel
    /// from several apps, and a second request never prompts beside the first.
    let sheets = KeyedSerializer<String>()
    /// One request per (user, app) at a time: a second finds the first one's
    /// outcome instead of asking again.
    let asking = KeyedSerializer<StatusHub.Key>()
    /// Requests waiting for a parent or guardian.
    let pending = PendingRequests()
    let backoff = AuthenticationBackoff()
    let quota = RequestQuota()
    private let familyState: Mutex<Family>
    private let statuses: Mutex<[StatusHub.Key: Cached]>

    package init(store: Store, configuration: GuardConfiguration, locker: any AppLocker,
                 settings: Settings = Settings(), logger: Logger = Logger(label: "guard")) throws(StoreError) {
        self.store = store
        self.locker = locker
        self.settings = settings
        self.logger = logger
        familyState = Mutex(Family(configuration: configuration))
        var cache: [StatusHub.Key: Cached] = [:]
        for record in try store.authorizations() {
            cache[StatusHub.Key(user: record.user, appID: record.appID)] = Cached(record)
        }
        statuses = Mutex(cache)
    }

    /// The family as last loaded.
    package var family: Family { familyState.withLock { $0 } }

    /// The status of `appID` for `user` as the program of `directory` sees it,
    /// from memory. A child's approval answers only the directory that was
    /// approved: a copy elsewhere, or another folder put at the same path,
    /// has never been decided.
    package func status(user: String, appID: String, directory: FileIdentity) -> AuthorizationStatus {
        guard let cached = statuses.withLock({ $0[StatusHub.Key(user: user, appID: appID)] }) else { return .notDetermined }
        if cached.status == .approved, cached.member == .child, cached.directory != directory { return .notDetermined }
        return cached.status
    }

    /// Watches the status of (user, app); `listener` runs on the thread that made the change.
    package func subscribe(user: String, appID: String, _ listener: @escaping StatusHub.Listener) -> (StatusHub.Key, Int) {
        hub.add(StatusHub.Key(user: user, appID: appID), listener)
    }

    package func unsubscribe(_ token: (StatusHub.Key, Int)) { hub.remove(token) }

    // MARK: Reading the store: failures are errors, never "nothing recorded"

    /// The authorization of (user, app), or nil when none is recorded.
    /// - Throws: `unavailable` when the store cannot be read.
    func authorization(user: String, appID: String) throws(GuardFailure) -> AuthorizationRecord? {
        do throws(StoreError) {
            return try store.authorization(user: user, appID: appID)
        } catch {
            throw storeFailure(error, reading: "the authorization of \(appID) for \(user)")
        }
    }

    /// Every authorization, or `user`'s.
    /// - Throws: `unavailable` when the store cannot be read.
    func authorizations(user: String? = nil) throws(GuardFailure) -> [AuthorizationRecord] {
        do throws(StoreError) {
            return try store.authorizations(user: user)
        } catch {
            throw storeFailure(error, reading: "the authorizations")
        }
    }

    private func storeFailure(_ error: StoreError, reading what: String) -> GuardFailure {
        logger.error("store: cannot read \(what): \(error)")
        return .internalError("the Guard could not read its store; see its log")
    }

    // MARK: Writing the store

    /// Records `record` with its audit row in one transaction, updates the
    /// in-memory status, and tells subscribers when the status changed.
    func commit(_ record: AuthorizationRecord, audit: AuditEvent) throws(GuardFailure) {
        do throws(StoreError) {
            if record.status == .denied {
                let forgotten = try store.saveDenial(record, audit: audit, keeping: settings.maximumDenialsPerUser)
                for appID in forgotten {
                    logger.info("\(record.user) has more than \(settings.maximumDenialsPerUser) denied apps; "
                        + "forgot the oldest denial, of \(appID)")
                    changeStatus(StatusHub.Key(user: record.user, appID: appID), to: nil)
                }
            } else {
                _ = try store.save(record, audit: audit)
            }
        } catch {
            logger.error("store: cannot record \(audit.action) of \(record.appID) for \(record.user): \(error)")
            throw .internalError("the Guard could not record the decision; see its log")
        }
        changeStatus(StatusHub.Key(user: record.user, appID: record.appID), to: Cached(record))
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
    }

    private func changeStatus(_ key: StatusHub.Key, to cached: Cached?) {
        let previous = statuses.withLock { cache in
            let old = cache[key]
            cache[key] = cached
            return old
        }
        if previous != cached { hub.publish(key, cached?.status ?? .notDetermined) }
    }

    /// Appends an audit row; a failure is logged, never fatal to the request.
    func audit(_ event: AuditEvent) {
        do throws(StoreError) {
            _ = try store.appendAudit(event)
        } catch {
            logger.error("store: cannot append audit \(event.action) for \(event.user): \(error)")
        }
    }

    func event(_ action: AuditAction, actor: String, user: String, appID: String?, member: FamilyControlsMember?,
               outcome: String, detail: String? = nil) -> AuditEvent {
        AuditEvent(at: Date(), actor: actor, action: action, user: user, appID: appID, member: member,
                   outcome: outcome, detail: detail)
    }

    /// Replaces the configuration (SIGHUP). Children who left the family keep
    /// their approvals and locks until `familyctl graduate` says otherwise.
    package func reload(_ configuration: GuardConfiguration) {
        familyState.withLock { $0 = Family(configuration: configuration) }
        warnAboutChildrenWhoLeft()
    }

    /// Logs every user with approved child authorizations who is no longer a
    /// child in the family.
    func warnAboutChildrenWhoLeft() {
        do throws(GuardFailure) {
            for user in try childrenWhoLeft() {
                logger.warning("\(user) is no longer a child in the family but still has approved child apps; "
                    + "their locks stay until an administrator runs `familyctl graduate \(user)` (or `familyctl revoke`)")
            }
        } catch {
            logger.error("cannot check for children who left the family: \(error.message)")
        }
    }

    /// Users with approved child authorizations who are no longer children in the family.
    package func childrenWhoLeft() throws(GuardFailure) -> [String] {
        let records = try authorizations()
        let users = Set(records.filter { $0.member == .child && $0.status == .approved }.map(\.user))
        let family = self.family
        return users.sorted().filter { user in
            guard let account = try? UserDatabase.user(named: user) else { return true }
            return (try? family.isChild(account)) == false
        }
    }
}

extension AuthorizationPolicy.Cached {
    init(_ record: AuthorizationRecord) {
        self.init(status: record.status, member: record.member, directory: record.appIdentity)
    }
}

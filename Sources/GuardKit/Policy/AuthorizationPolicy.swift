import FamilyControlsModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit

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
        package init(pamDirectory: String? = nil) { self.pamDirectory = pamDirectory }
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
    let backoff = AuthenticationBackoff()
    private let familyState: Mutex<Family>
    private let statuses: Mutex<[StatusHub.Key: AuthorizationStatus]>

    package init(store: Store, configuration: GuardConfiguration, locker: any AppLocker,
                 settings: Settings = Settings(), logger: Logger = Logger(label: "guard")) throws(StoreError) {
        self.store = store
        self.locker = locker
        self.settings = settings
        self.logger = logger
        familyState = Mutex(Family(configuration: configuration))
        var cache: [StatusHub.Key: AuthorizationStatus] = [:]
        for record in try store.authorizations() {
            cache[StatusHub.Key(user: record.user, appID: record.appID)] = record.status
        }
        statuses = Mutex(cache)
    }

    /// The family as last loaded.
    package var family: Family { familyState.withLock { $0 } }

    /// The status of `appID` for `user`, from memory.
    package func status(user: String, appID: String) -> AuthorizationStatus {
        statuses.withLock { $0[StatusHub.Key(user: user, appID: appID)] } ?? .notDetermined
    }

    /// Watches the status of (user, app); `listener` runs on the thread that made the change.
    package func subscribe(user: String, appID: String, _ listener: @escaping StatusHub.Listener) -> (StatusHub.Key, Int) {
        hub.add(StatusHub.Key(user: user, appID: appID), listener)
    }

    package func unsubscribe(_ token: (StatusHub.Key, Int)) { hub.remove(token) }

    /// Records `record` with its audit row in one transaction, updates the
    /// in-memory status, and tells subscribers when the status changed.
    func commit(_ record: AuthorizationRecord, audit: AuditEvent) throws(GuardFailure) {
        do throws(StoreError) {
            _ = try store.save(record, audit: audit)
        } catch {
            logger.error("store: cannot record \(audit.action) of \(record.appID) for \(record.user): \(error)")
            throw .internalError("the Guard could not record the decision; see its log")
        }
        changeStatus(StatusHub.Key(user: record.user, appID: record.appID), to: record.status)
    }

    /// Removes the authorization (back to not determined) with its audit row.
    func remove(user: String, appID: String, audit: AuditEvent) throws(GuardFailure) {
        do throws(StoreError) {
            try store.deleteAuthorization(user: user, appID: appID, audit: audit)
        } catch {
            logger.error("store: cannot record \(audit.action) of \(appID) for \(user): \(error)")
            throw .internalError("the Guard could not record the decision; see its log")
        }
        changeStatus(StatusHub.Key(user: user, appID: appID), to: .notDetermined)
    }

    private func changeStatus(_ key: StatusHub.Key, to status: AuthorizationStatus) {
        let previous = statuses.withLock { cache in
            let old = cache[key] ?? .notDetermined
            cache[key] = status == .notDetermined ? nil : status
            return old
        }
        if previous != status { hub.publish(key, status) }
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
        for user in childrenWhoLeft() {
            logger.warning("\(user) is no longer a child in the family but still has approved child apps; "
                + "their locks stay until an administrator runs `familyctl graduate \(user)` (or `familyctl revoke`)")
        }
    }

    /// Users with approved child authorizations who are no longer children in the family.
    package func childrenWhoLeft() -> [String] {
        let records = (try? store.authorizations()) ?? []
        let users = Set(records.filter { $0.member == .child && $0.status == .approved }.map(\.user))
        let family = self.family
        return users.sorted().filter { user in
            guard let account = try? UserDatabase.user(named: user) else { return true }
            return (try? family.isChild(account)) == false
        }
    }
}

import FamilyControlsModel
import GuardIdentity
import GuardPolicy
import GuardProtocol
import GuardStore
import Synchronization
import SystemKit
import TimeLimits

/// The time limits approved apps set for their children, and the more time
/// guardians give: who may set what, what takes effect at once (stricter
/// settings) and what waits for a guardian (looser ones, more time), and
/// what is in force for each child.
///
/// It records settings and decisions only; the time keeper (which counts
/// session time, writes the login-limits file and locks or ends sessions)
/// reads ``inForce()`` and hears of every change through ``whenChanged(_:)``.
package final class ChildLimitsPolicy: Sendable {
    /// Told after every change of the limits in force.
    package typealias Listener = @Sendable () -> Void
    /// The session time `uid` used on local day `day`, from the time keeper;
    /// nil when nothing counts it.
    package typealias UsedTime = @Sendable (_ uid: UInt32, _ day: String) -> Int?

    let policy: AuthorizationPolicy
    /// The moment "now" is, in tests a fixed one.
    let clock: @Sendable () -> UnixTime
    private let listeners = Mutex<[Listener]>([])
    private let usedTime = Mutex<UsedTime?>(nil)

    package init(policy: AuthorizationPolicy, clock: @escaping @Sendable () -> UnixTime = { .now }) {
        self.policy = policy
        self.clock = clock
        // An app whose approval ends takes its limits with it.
        policy.ledger.whenChanged { [weak self] in self?.removeLimitsOfEndedApprovals() }
    }

    /// Runs `listener` after every change of the limits in force (set,
    /// cleared, more time given, an app's approval ended), on the thread that made it.
    package func whenChanged(_ listener: @escaping Listener) {
        listeners.withLock { $0.append(listener) }
    }

    /// Where `familyctl limits` reads the time a child used today: the time
    /// keeper's count. Until one is given, the time used is shown as unknown.
    package func countUsedTime(with source: @escaping UsedTime) {
        usedTime.withLock { $0 = source }
    }

    func changed() {
        for listener in listeners.withLock({ $0 }) { listener() }
    }

    func used(uid: UInt32, day: String) -> Int? {
        usedTime.withLock { $0 }?(uid, day)
    }

    var ledger: AuthorizationLedger { policy.ledger }
    var store: Store { policy.ledger.store }
    var logger: Logger { policy.logger }

    /// The limits in force for every child who has any: their apps' limits
    /// combined, today's more time, and until when they may log in outside
    /// their hours. For the time keeper.
    /// - Throws: when the store cannot be read.
    package func inForce() throws(GuardFailure) -> [ChildTimeLimits] {
        try views(user: nil).map(\.inForce)
    }

    /// Removes, audited, the limits of every app no longer approved for its
    /// child (revoked, denied, graduated, the configuration's approval gone).
    func removeLimitsOfEndedApprovals() {
        do throws(GuardFailure) {
            var removed = false
            for record in try storedLimits(user: nil) {
                let approval = try ledger.authorization(user: record.user, appID: record.appID)
                guard approval?.status != .approved || approval?.member != .child else { continue }
                do throws(StoreError) {
                    removed = try store.deleteTimeLimits(user: record.user, appID: record.appID, audit: ledger.event(
                        .limits, actor: AuditEvent.guardActor, user: record.user, appID: record.appID, member: .child,
                        outcome: .removed, detail: "the app's approval ended; its time limits went with it")) || removed
                } catch {
                    logger.error("store: cannot remove the time limits of \(record.appID) for \(record.user): \(error)")
                }
            }
            if removed { changed() }
        } catch {
            logger.error("time limits: \(error.message)")
        }
    }

    /// The rows of the store, or the failure to read them.
    func storedLimits(user: String?) throws(GuardFailure) -> [TimeLimitsRecord] {
        do throws(StoreError) {
            return try store.timeLimits(user: user)
        } catch {
            logger.error("store: cannot read the time limits: \(error)")
            throw .internalError("the Guard could not read the time limits in its store; see its log")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel
import Synchronization
import SystemKit
import GuardIdentity
import GuardSessions
import GuardStore
import GuardTime
import GuardTimeLimits
import GuardProtocol
import GuardPolicy
import TimeLimits

/// The limits the policy records (what approved apps set, with the more
/// time guardians gave), as the time keeper reads them. A failure to read
/// them is logged and answered with the last limits read, never with none:
/// "no limits" would rewrite the login-limits file without the children and
/// stop their sessions' counting.
final class RecordedTimeLimits: TimeLimitsSource {
    let policy: ChildLimitsPolicy
    let logger: Logger
    private let lastRead = Mutex<[ChildTimeLimits]>([])

    init(policy: ChildLimitsPolicy, logger: Logger) {
        self.policy = policy
        self.logger = logger
    }

    func childrenWithLimits() -> [ChildTimeLimits] {
        do throws(GuardFailure) {
            let children = try policy.inForce()
            lastRead.withLock { $0 = children }
            return children
        } catch {
            logger.error("time: cannot read the time limits in force: \(error.message); keeping the limits last read")
            return lastRead.withLock { $0 }
        }
    }
}

/// The time keeper, beside the monitors: the same sessions, the same
/// enforcer, the store, and the login-limits file in the state directory.
extension GuardService {
    /// Starts the time keeper; a failure is logged (no time is then kept
    /// during sessions, and the file is not rewritten), never fatal.
    /// - Parameters:
    ///   - store: where the time used is kept (the policy's store).
    ///   - source: the children with limits in force.
    ///   - logind: logind's sessions, when it runs.
    package func startTimeKeeper(store: Store, stateDirectory: String, enforcer: any SessionEnforcing, logind: LogindSessions?) {
        let ledger = policy.ledger, time = time
        let source = RecordedTimeLimits(policy: timeLimits, logger: logger)
        // The limits changed: the keeper looks again (the file, the sessions);
        // familyctl limits reads the time the keeper counted.
        timeLimits.whenChanged { time.limitsChanged() }
        timeLimits.countUsedTime { uid, day in
            let used = time.usedToday()
            return used.day == day ? used.seconds[uid] ?? 0 : nil
        }
        do throws(Errno) {
            try time.start(TimeKeeper.Context(
                sessions: { [self] in monitorSessions(logind: logind) },
                source: source, enforcer: enforcer,
                messenger: DesktopMessenger(helper: Self.ownProgram(),
                                            terminal: TerminalMessenger(processesRead: policy.limits.processesReadAtOnce)),
                store: store, filePath: stateDirectory + "/" + LoginLimitsFile.name, limits: policy.limits,
                audit: { outcome, user, detail in
                    ledger.audit(.sessionTime, actor: AuditEvent.guardActor, user: user, appID: nil, member: .child,
                                 outcome: outcome, detail: detail)
                },
                logger: logger, sessionChanges: Self.sessionChanges(logind: logind)))
        } catch {
            logger.error("time: cannot start the time keeper (\(error)); children's session time is not kept during sessions")
        }
    }

    /// How the keeper hears of a session opening: without logind, from the
    /// PAM module (``sessionsChanged()``); with it, from a change monitor of
    /// its own.
    private static func sessionChanges(logind: LogindSessions?) -> TimeKeeper.SessionChanges {
        guard logind != nil else { return .announced }
        return LogindSessions().map { .watched($0) } ?? .unwatched
    }

    /// The Guard's own program, which runs as the desktop notification helper.
    private static func ownProgram() -> String { CompanionProgram.running(fallback: "/usr/sbin/familycontrolsd") }
}

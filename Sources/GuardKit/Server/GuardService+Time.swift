#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel
import SystemKit
import GuardIdentity
import GuardSessions
import GuardStore
import GuardTime
import TimeLimits

/// No child has time limits: the source the Guard's time keeper reads until
/// the policy records the limits apps set. The keeper still writes the
/// login-limits file (with no `child` line) and counts nothing.
package struct NoTimeLimitsRecorded: TimeLimitsSource {
    package init() {}

    package func childrenWithLimits() -> [ChildTimeLimits] { [] }
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
    package func startTimeKeeper(store: Store, stateDirectory: String, enforcer: any SessionEnforcing, source: any TimeLimitsSource,
                                 logind: LogindSessions?) {
        let ledger = policy.ledger
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
                logger: logger))
        } catch {
            logger.error("time: cannot start the time keeper (\(error)); children's session time is not kept during sessions")
        }
    }

    /// The Guard's own program, which runs as the desktop notification helper.
    private static func ownProgram() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "/usr/sbin/familycontrolsd" }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

import GuardProtocol
import SystemKit
import GuardPolicy

/// Checks and repairs every lock every `[Locks] VerifyInterval=` while the
/// Guard runs, so drift (an administrator's `chattr -i`, a filesystem
/// remounted, a file a lease kept immutable through an unlock) is seen and
/// repaired without a restart or a `familyctl locks verify`.
///
/// One thread of its own for the life of the Guard: the check blocks on the
/// filesystem and takes each app's turn, as `familyctl locks verify` does.
/// The interval is read again at every wake-up, so a reload (`SIGHUP`) that
/// changes it or turns it off takes effect within a minute.
enum PeriodicLockCheck {
    /// How long the thread sleeps at most between looks at the interval.
    static let longestNap: Duration = .seconds(60)

    /// Starts the thread.
    /// - Throws: ``Errno`` when no thread can be made.
    static func start(policy: AuthorizationPolicy) throws(Errno) {
        let thread = try SystemThread.spawn(name: "guard-verify") {
            var last = MonotonicInstant.now
            while true {
                let interval = policy.family.configuration.lockVerifyInterval
                SystemThread.sleep(for: min(interval ?? longestNap, longestNap))
                guard let interval = policy.family.configuration.lockVerifyInterval,
                      !(MonotonicInstant.now < last.advanced(by: interval)) else { continue }
                policy.verifyPeriodically()
                last = .now
            }
        }
        thread.detach()
    }
}

extension AuthorizationPolicy {
    /// One round of ``PeriodicLockCheck``: every lock checked against the
    /// store and repaired, every finding logged and audited.
    package func verifyPeriodically() {
        do throws(GuardFailure) {
            let findings = try keeper.verify(repair: true)
            if !findings.isEmpty { logger.notice("verify: repaired or reported \(findings.count) problem(s)") }
        } catch {
            logger.error("verify: \(error.message)")
        }
        // Directory groups change without a reload: a pupil removed from a class.
        followTheConfiguration()
    }
}

import Synchronization
import SystemKit
import GuardIdentity

/// The one place that decides what a child's session bears when rules call
/// for it: every rule that costs a session (a required monitor kept down,
/// time that is up) asks here, and what is decided is carried out by the one
/// ``SessionEnforcing`` (the ``SessionEnforcer``).
///
/// Several rules at once cost a session once: a session locked or ended
/// less than ``GuardLimits/sessionEndGrace`` ago (the time a lock takes to
/// be confirmed, or an ending to finish) is not asked again, unless an end
/// follows a lock: the stricter consequence always goes through. Each rule
/// decides on its own when it holds and how often it asks again (the
/// monitors: a required monitor kept down N times; the time keeper: while
/// the time is up, every ``GuardLimits/timeEnforcedAgainAfter``).
package final class SessionRules: SessionEnforcing {
    private let enforcer: any SessionEnforcing
    private let window: Duration
    /// The sessions asked of lately: what and when, by session name.
    private let recent = Mutex<[String: (consequence: SessionConsequence, at: MonotonicInstant)]>([:])

    /// - Parameters:
    ///   - enforcer: what acts on the sessions.
    ///   - limits: the grace period, within which a session is asked once.
    package init(enforcer: any SessionEnforcing, limits: GuardLimits = GuardLimits()) {
        self.enforcer = enforcer
        window = limits.sessionEndGrace
    }

    package func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String) {
        let now = MonotonicInstant.now
        let due: [MonitorSession] = recent.withLock { recent in
            recent = recent.filter { now < $0.value.at.advanced(by: window) }
            return sessions.filter { session in
                if let earlier = recent[session.name], earlier.consequence == .end || consequence == .lock { return false }
                recent[session.name] = (consequence, now)
                return true
            }
        }
        guard !due.isEmpty else { return }
        enforcer.enforce(consequence, on: due, reason: reason)
    }
}

import GuardIdentity
import SystemKit
import TimeLimits

/// What a child's limits call for at one look: a warning, the lock or end of
/// their sessions, or nothing. One place decides (this), one place acts (the
/// Guard's ``SessionEnforcing``, the same a required monitor kept down uses).
///
/// Pure: the keeper hands it the limits, the time used, the clock and what
/// was already done for the child (``State``), and carries out the actions.
package struct TimeRules: Sendable {
    /// What was already done for one child, carried from look to look.
    package struct State: Sendable, Equatable {
        /// The warnings (seconds before the end) given since the time left
        /// last rose above them: each is given once.
        package var warned: Set<Int> = []
        /// When their sessions were last locked or ended for time, while it
        /// is up; nil while it is not.
        package var enforcedAt: MonotonicInstant?

        package init() {}
    }

    /// One thing to do for a child.
    package enum Action: Sendable, Equatable {
        /// Tell the child in their sessions: `secondsLeft` until the end.
        case warn(secondsLeft: Int)
        /// Lock or end every session of the child; `first` when their time
        /// has just run out (not a lock again of one they unlocked).
        case enforce(SessionConsequence, reason: String, first: Bool)

        var isWarning: Bool { if case .warn = self { true } else { false } }
    }

    /// The warnings, in seconds before the end, longest first.
    package var warnings: [Int]
    /// How long after locking or ending a child's sessions they are locked
    /// or ended again while the time is still up.
    package var enforcedAgainAfter: Duration

    package init(limits: GuardLimits) {
        warnings = limits.timeWarnings.map { Int($0.components.seconds) }.filter { $0 > 0 }.sorted(by: >)
        enforcedAgainAfter = limits.timeEnforcedAgainAfter
    }

    /// What `child`'s limits call for at `now` (local `moment`), having used
    /// `used` seconds today, with a session open or not; and, when it is
    /// allowed, the seconds left (nil for no end in sight), so that the
    /// keeper looks again in time for the next warning or the end.
    package func decide(_ child: ChildTimeLimits, used: Int, moment: LocalMoment, now: UnixTime, clock: MonotonicInstant,
                        hasSessions: Bool, state: inout State) -> (actions: [Action], secondsLeft: Int?) {
        let extra = child.day == moment.day ? child.extraSeconds : 0
        let open = child.openUntil.isFinite ? Int(max(0, child.openUntil - now.seconds).rounded(.down)) : 0
        let verdict = child.limits.verdict(at: moment, used: used, extra: extra, openSeconds: open)
        switch verdict {
        case .allowed(let left):
            state.enforcedAt = nil
            guard let left else {
                state.warned = []
                return ([], nil)
            }
            // More time given: the warnings above what is left now come again.
            state.warned = state.warned.filter { $0 >= left }
            let due = warnings.filter { left <= $0 && !state.warned.contains($0) }
            // A warning counts as given only when there was a session to give it in.
            guard hasSessions, !due.isEmpty else { return ([], left) }
            state.warned.formUnion(due)
            return ([.warn(secondsLeft: left)], left)
        case .outsideHours, .timeUsedUp:
            state.warned = Set(warnings)
            guard hasSessions else { return ([], 0) }
            let first = state.enforcedAt == nil
            if let last = state.enforcedAt, clock < last.advanced(by: enforcedAgainAfter) { return ([], 0) }
            state.enforcedAt = clock
            let why = if case .outsideHours = verdict { "it is outside the hours \(child.limits.hours?.description ?? "")" }
                else { "today's time (\(child.limits.daily?.description ?? "")) is used up" }
            let consequence: SessionConsequence = child.limits.atEnd == .end ? .end : .lock
            return ([.enforce(consequence, reason: "time is up for \(child.user): \(why) (set by \(Self.names(child)))",
                              first: first)], 0)
        }
    }

    /// What the child is told `left` seconds before their time is up: what
    /// will happen, who set the limit, and what they can do.
    package static func warning(secondsLeft left: Int, for child: ChildTimeLimits) -> String {
        let ending = child.limits.atEnd == .end ? "your session will end" : "your screen will lock"
        return "\(spoken(left)) left: then \(ending). Time limit set by \(names(child)); "
            + "a parent or guardian can give you more time."
    }

    /// "5 minutes", "1 minute", "30 seconds".
    static func spoken(_ seconds: Int) -> String {
        if seconds >= 120 { return "\((seconds + 30) / 60) minutes" }
        if seconds >= 60 { return "1 minute" }
        return seconds == 1 ? "1 second" : "\(seconds) seconds"
    }

    /// The apps' names as one phrase.
    static func names(_ child: ChildTimeLimits) -> String {
        child.appNames.isEmpty ? "an approved app" : child.appNames.map { DisplayText.sanitized($0, limit: 200) }.joined(separator: ", ")
    }
}

/// What happens to a child's sessions when their time is up or their hours end.
public enum TimeUpAction: String, Hashable, Sendable, CaseIterable {
    /// The screen locks (logind `LockSession`), again as often as it is unlocked.
    case lock
    /// The sessions end (logind `TerminateSession`; without logind, their processes after a grace period).
    case end

    /// Which of two is stricter: ending.
    public static func stricter(_ a: TimeUpAction, _ b: TimeUpAction) -> TimeUpAction { a == .end || b == .end ? .end : .lock }
}

/// The limits an approved app sets for its child: the hours they may be
/// logged in, the session time a day allows, and what happens at the end.
/// Nil for hours or daily time is no limit of that kind.
public struct TimeLimits: Hashable, Sendable {
    public var hours: LoginHours?
    public var daily: SessionDuration?
    public var atEnd: TimeUpAction

    public init(hours: LoginHours? = nil, daily: SessionDuration? = nil, atEnd: TimeUpAction = .lock) {
        self.hours = hours
        self.daily = daily
        self.atEnd = atEnd
    }

    /// Whether these limit anything.
    public var limitsAnything: Bool { hours != nil || daily != nil }

    /// Whether these are as strict as `current` or stricter in every way (no
    /// more hours, no more time, ending rather than only locking): what an
    /// app may set at once. Anything looser is a guardian's decision.
    public func isAtLeastAsStrict(as current: TimeLimits?) -> Bool {
        guard let current else { return true }
        if let theirs = current.hours {
            guard let mine = hours, mine.isWithin(theirs) else { return false }
        }
        if let theirs = current.daily {
            guard let mine = daily, mine <= theirs else { return false }
        }
        return !(current.atEnd == .end && atEnd == .lock)
    }

    /// What several apps' limits leave together: the hours all allow, the
    /// shortest daily time, the stricter action.
    public static func combined(_ all: [TimeLimits]) -> TimeLimits? {
        guard var result = all.first else { return nil }
        for limits in all.dropFirst() {
            switch (result.hours, limits.hours) {
            case (let mine?, let theirs?): result.hours = mine.intersection(theirs)
            case (nil, let theirs?): result.hours = theirs
            default: break
            }
            if let theirs = limits.daily { result.daily = min(result.daily ?? theirs, theirs) }
            result.atEnd = TimeUpAction.stricter(result.atEnd, limits.atEnd)
        }
        return result
    }
}

/// Whether a child may be logged in at a moment, and for how long.
public enum TimeVerdict: Hashable, Sendable {
    /// Allowed; `secondsLeft` until the hours end or the day's time is spent
    /// (whichever is first), nil when neither limit applies.
    case allowed(secondsLeft: Int?)
    /// Outside the hours; the next start (days ahead, minute), nil when no day has hours.
    case outsideHours(next: (daysAhead: Int, minute: Int)?)
    /// The day's time is used up; tomorrow's first start (minute), 0 without hours.
    case timeUsedUp(tomorrowAt: Int?)

    public static func == (a: TimeVerdict, b: TimeVerdict) -> Bool {
        switch (a, b) {
        case (.allowed(let x), .allowed(let y)): return x == y
        case (.outsideHours(let x), .outsideHours(let y)): return x?.daysAhead == y?.daysAhead && x?.minute == y?.minute
        case (.timeUsedUp(let x), .timeUsedUp(let y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .allowed(let left): hasher.combine(0); hasher.combine(left)
        case .outsideHours(let next): hasher.combine(1); hasher.combine(next?.daysAhead); hasher.combine(next?.minute)
        case .timeUsedUp(let at): hasher.combine(2); hasher.combine(at)
        }
    }

    public var isAllowed: Bool {
        if case .allowed = self { return true }
        return false
    }
}

extension TimeLimits {
    /// The verdict at `moment` for a child who has used `used` seconds today
    /// and been given `extra` more, with logins outside the hours allowed for
    /// `openSeconds` more seconds (more time a guardian gave; 0 for none).
    /// The same rules the PAM module applies to the login-limits file.
    public func verdict(at moment: LocalMoment, used: Int, extra: Int, openSeconds: Int = 0) -> TimeVerdict {
        var left: Int?
        if let hours, openSeconds <= 0 {
            guard let minutes = hours.minutesLeft(weekday: moment.weekday, minute: moment.minute) else {
                return .outsideHours(next: hours.nextStart(weekday: moment.weekday, minute: moment.minute))
            }
            left = minutes * 60 - moment.second
        } else if openSeconds > 0 {
            left = openSeconds
        }
        if let daily {
            let remaining = daily.seconds + extra - used
            guard remaining > 0 else {
                let tomorrow = (moment.weekday + 1) % 7
                return .timeUsedUp(tomorrowAt: hours.map { $0.days[tomorrow].first?.start } ?? 0)
            }
            left = min(left ?? remaining, remaining)
        }
        return .allowed(secondsLeft: left)
    }
}

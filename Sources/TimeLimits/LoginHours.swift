/// The hours a child may be logged in, per weekday, in the machine's local
/// time: `Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00` as a person writes them,
/// `0730-2000/…/0900-2100` (Monday first) in the login-limits file the PAM
/// module reads. A weekday no group names has no hours: no login that day.
public struct LoginHours: Hashable, Sendable, CustomStringConvertible {
    /// Minutes of a day, `start ..< end`; `end` may be 1440 (24:00).
    public struct Range: Hashable, Sendable, Comparable {
        public var start: Int
        public var end: Int

        public init(start: Int, end: Int) {
            self.start = start
            self.end = end
        }

        public static func < (a: Range, b: Range) -> Bool { (a.start, a.end) < (b.start, b.end) }
    }

    /// Seven lists of ranges, Monday first; each sorted, none overlapping or touching.
    public private(set) var days: [[Range]]

    /// Hours from seven lists of ranges, Monday first, merged where they overlap or touch.
    public init(days: [[Range]]) {
        precondition(days.count == 7, "seven weekdays, Monday first")
        self.days = days.map(Self.merged)
    }

    /// The most ranges a day holds: the login-limits file's bound, which the
    /// PAM module reads (docs/design/login-limits.md).
    public static let mostRangesADay = 32

    /// Every hour of every day: no limit.
    public static let always = LoginHours(days: Array(repeating: [Range(start: 0, end: 1440)], count: 7))

    /// The weekdays' short names, Monday first, as the syntax writes them.
    public static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// Whether minute `minute` (0 ..< 1440) of weekday `weekday` (0 is Monday) is in the hours.
    public func allows(weekday: Int, minute: Int) -> Bool {
        days[weekday].contains { $0.start <= minute && minute < $0.end }
    }

    /// Minutes from `minute` of `weekday` to the end of the range it is in
    /// (across midnight when the next day's hours start at 00:00); nil when
    /// the moment is outside the hours; 10,080 (a week) when they never end.
    public func minutesLeft(weekday: Int, minute: Int) -> Int? {
        guard let range = days[weekday].first(where: { $0.start <= minute && minute < $0.end }) else { return nil }
        var left = range.end - minute
        var day = weekday
        var end = range.end
        while end == 1440, left < 7 * 1440 {
            day = (day + 1) % 7
            guard let first = days[day].first, first.start == 0 else { break }
            left += first.end
            end = first.end
        }
        return min(left, 7 * 1440)
    }

    /// The next moment the hours start after `minute` of `weekday`: how many
    /// days ahead (0 is today) and the minute; nil when no day has hours.
    public func nextStart(weekday: Int, minute: Int) -> (daysAhead: Int, minute: Int)? {
        for ahead in 0...7 {
            let day = (weekday + ahead) % 7
            if let range = days[day].first(where: { ahead > 0 || $0.start > minute }) {
                return (ahead, range.start)
            }
        }
        return nil
    }

    /// The hours both allow: what two apps' limits leave together.
    public func intersection(_ other: LoginHours) -> LoginHours {
        LoginHours(days: (0..<7).map { day in
            days[day].flatMap { mine in
                other.days[day].compactMap { theirs in
                    let start = max(mine.start, theirs.start), end = min(mine.end, theirs.end)
                    return start < end ? Range(start: start, end: end) : nil
                }
            }
        })
    }

    /// Whether every minute these allow, `other` allows too (these are as strict or stricter).
    public func isWithin(_ other: LoginHours) -> Bool {
        intersection(other) == self
    }

    /// The text a person writes, groups of weekdays with the same hours joined: `Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00`;
    /// `none` when no day has hours.
    public var description: String {
        var groups: [String] = []
        var day = 0
        while day < 7 {
            var last = day
            while last + 1 < 7, days[last + 1] == days[day] { last += 1 }
            if !days[day].isEmpty {
                let names = last == day ? Self.weekdayNames[day] : "\(Self.weekdayNames[day])-\(Self.weekdayNames[last])"
                groups.append(names + " " + days[day].map { "\(Self.clock($0.start))-\(Self.clock($0.end))" }.joined(separator: " "))
            }
            day = last + 1
        }
        return groups.isEmpty ? "none" : groups.joined(separator: ",")
    }

    /// The `WINDOWS` field of the login-limits file: seven groups, Monday
    /// first, joined by `/`, each `none` or `HHMM-HHMM` ranges joined by `,`.
    /// A day of more than ``mostRangesADay`` ranges (two apps' hours combined)
    /// keeps its first ones: fewer hours, never more.
    public var stateField: String {
        days.map { ranges in
            ranges.isEmpty ? "none" : ranges.prefix(Self.mostRangesADay).map { "\(Self.digits($0.start))-\(Self.digits($0.end))" }.joined(separator: ",")
        }.joined(separator: "/")
    }

    /// `HH:MM` of a minute of the day.
    public static func clock(_ minute: Int) -> String {
        "\(pad(minute / 60)):\(pad(minute % 60))"
    }

    private static func digits(_ minute: Int) -> String { "\(pad(minute / 60))\(pad(minute % 60))" }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    private static func merged(_ ranges: [Range]) -> [Range] {
        var result: [Range] = []
        for range in ranges.sorted() where range.start < range.end {
            if let last = result.last, range.start <= last.end {
                result[result.count - 1].end = max(last.end, range.end)
            } else {
                result.append(range)
            }
        }
        return result
    }
}

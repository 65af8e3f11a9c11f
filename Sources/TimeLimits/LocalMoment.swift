#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A moment in the machine's local time, as limits read it.
public struct LocalMoment: Hashable, Sendable {
    /// 0 is Monday.
    public var weekday: Int
    /// Minute of the day, 0 ..< 1440.
    public var minute: Int
    /// Second of the minute.
    public var second: Int
    /// `YYYY-MM-DD`: the day session time counts in.
    public var day: String

    public init(weekday: Int, minute: Int, second: Int = 0, day: String) {
        self.weekday = weekday
        self.minute = minute
        self.second = second
        self.day = day
    }

    /// `time` in the machine's time zone (`localtime_r(3)`).
    public init(_ time: UnixTime) {
        var whole = time_t(time.seconds.rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        weekday = Int((parts.tm_wday + 6) % 7)
        minute = Int(parts.tm_hour) * 60 + Int(parts.tm_min)
        second = Int(parts.tm_sec)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        day = "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))"
    }
}

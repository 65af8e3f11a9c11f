#if canImport(Glibc)
import Glibc
#endif

/// A moment on the wall clock, in seconds since 1970-01-01 UTC: what the
/// store keeps and the protocol sends. (`MonotonicInstant` measures waits;
/// this says when something happened.)
public struct UnixTime: Sendable, Hashable, Comparable {
    public var seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// Now, from `CLOCK_REALTIME`.
    public static var now: UnixTime {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UnixTime(seconds: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// This moment moved by `duration`.
    public func adding(_ duration: Duration) -> UnixTime {
        let parts = duration.components
        return UnixTime(seconds: seconds + Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` in UTC, the second it falls in.
    public var iso8601: String {
        var whole = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&whole, &parts)
        return "\(Self.pad(parts.tm_year + 1900, 4))-\(Self.pad(parts.tm_mon + 1))-\(Self.pad(parts.tm_mday))T"
            + "\(Self.pad(parts.tm_hour)):\(Self.pad(parts.tm_min)):\(Self.pad(parts.tm_sec))Z"
    }

    /// `YYYY-MM-DD HH:MM:SS` in the machine's time zone, as `last` and syslog show times.
    public var localDescription: String {
        var whole = time_t(seconds.rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        return "\(Self.pad(parts.tm_year + 1900, 4))-\(Self.pad(parts.tm_mon + 1))-\(Self.pad(parts.tm_mday)) "
            + "\(Self.pad(parts.tm_hour)):\(Self.pad(parts.tm_min)):\(Self.pad(parts.tm_sec))"
    }

    public static func < (a: UnixTime, b: UnixTime) -> Bool { a.seconds < b.seconds }

    private static func pad(_ value: Int32, _ width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}

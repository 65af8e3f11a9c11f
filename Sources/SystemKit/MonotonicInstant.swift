#if canImport(Glibc)
import Glibc
#endif

/// A moment on the clock that only moves forward and keeps counting while the
/// machine sleeps (`CLOCK_BOOTTIME`, as `ContinuousClock` reads on Linux):
/// what deadlines, timeouts and rate limits measure against. (`UnixTime`
/// says when something happened.)
///
/// `ContinuousClock` would do, but it lives in Swift's concurrency runtime,
/// and one mention of it links that runtime and libdispatch into the Guard and
/// `familyctl`, which otherwise need neither: a larger binary, more memory and
/// a slower start, for a clock read.
public struct MonotonicInstant: Sendable, Hashable, Comparable {
    /// Nanoseconds since boot.
    public let nanoseconds: Int64

    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// Now, from `CLOCK_BOOTTIME`.
    public static var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// This moment moved by `duration` (saturating rather than overflowing).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let (sum, overflow) = nanoseconds.addingReportingOverflow(Self.nanoseconds(in: duration))
        if overflow { return MonotonicInstant(nanoseconds: duration > .zero ? .max : .min) }
        return MonotonicInstant(nanoseconds: sum)
    }

    /// The time from this moment to `other`; negative when `other` is earlier.
    public func duration(to other: MonotonicInstant) -> Duration {
        .nanoseconds(other.nanoseconds &- nanoseconds)
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    public static func + (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        lhs.advanced(by: rhs)
    }

    public static func - (lhs: MonotonicInstant, rhs: Duration) -> MonotonicInstant {
        lhs.advanced(by: .zero - rhs)
    }

    public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Duration {
        rhs.duration(to: lhs)
    }

    /// `duration` in whole nanoseconds, clamped to what an `Int64` holds.
    private static func nanoseconds(in duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (sum, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowAgain { return seconds > 0 ? .max : .min }
        return sum
    }
}

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

    /// This moment moved by `duration`, saturating at the ends of the clock
    /// rather than overflowing (a deadline "never" is a deadline far away).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let saturated = MonotonicInstant(nanoseconds: duration > .zero ? .max : .min)
        guard let step = Self.nanoseconds(in: duration) else { return saturated }
        let (sum, overflow) = nanoseconds.addingReportingOverflow(step)
        return overflow ? saturated : MonotonicInstant(nanoseconds: sum)
    }

    /// The time from this moment to `other`; negative when `other` is earlier.
    /// Exact for any two instants (`Duration` holds 128 bits).
    public func duration(to other: MonotonicInstant) -> Duration {
        .nanoseconds(other.nanoseconds) - .nanoseconds(nanoseconds)
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

    /// `duration` in whole nanoseconds (the fraction dropped), or nil when an
    /// `Int64` cannot hold it.
    private static func nanoseconds(in duration: Duration) -> Int64? {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return nil }
        let (sum, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? nil : sum
    }
}

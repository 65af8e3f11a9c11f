#if canImport(Glibc)
import Glibc
#endif

/// Waits until one descriptor is ready (`poll(2)`), for blocking clients that
/// need a timeout.
///
/// The one wrapper around `poll(2)` in the project.
public enum Poll {
    /// Waits for `events` (`POLLIN`, `POLLOUT`) on `descriptor`.
    /// - Parameter deadline: give up at this instant; nil waits indefinitely.
    /// - Returns: the returned events (`POLLHUP` and `POLLERR` included), or
    ///   nil when the deadline passed first.
    /// - Throws: ``Errno`` from `poll(2)`. An interrupted wait is retried with the time left.
    public static func wait(
        for events: Int16, on descriptor: CInt, until deadline: MonotonicInstant?
    ) throws(Errno) -> Int16? {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        while true {
            // The timeout is worked out afresh for each try: after an interruption, only the time left.
            let result = try retryingOnInterrupt("poll") { poll(&entry, 1, milliseconds(until: deadline)) }
            if result > 0 { return entry.revents }
            // poll rounds down to whole milliseconds; only give up once the deadline passed.
            if let deadline, MonotonicInstant.now >= deadline { return nil }
        }
    }

    /// Waits until one of `descriptors` has one of its `events`, or until
    /// `deadline` (nil: no deadline); a negative descriptor is skipped, as
    /// `poll(2)` does.
    /// - Returns: the returned events of each, in order (0 for one not
    ///   ready; all 0 when the deadline passed first).
    /// - Throws: ``Errno`` from `poll(2)`; an interrupted wait is retried with the time left.
    public static func wait(for events: [(descriptor: CInt, events: Int16)],
                            until deadline: MonotonicInstant? = nil) throws(Errno) -> [Int16] {
        var entries = events.map { pollfd(fd: $0.descriptor, events: $0.events, revents: 0) }
        let count = nfds_t(entries.count)
        while true {
            let result = try retryingOnInterrupt("poll") { poll(&entries, count, milliseconds(until: deadline)) }
            if result > 0 { return entries.map(\.revents) }
            if let deadline, MonotonicInstant.now >= deadline { return entries.map { _ in 0 } }
        }
    }

    /// Milliseconds from now until `deadline`, rounded up, for `poll(2)`; -1 for none.
    public static func milliseconds(until deadline: MonotonicInstant?) -> CInt {
        guard let deadline else { return -1 }
        let left = MonotonicInstant.now.duration(to: deadline)
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return CInt(clamping: millis)
    }
}

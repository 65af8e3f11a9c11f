#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// An epoll instance (`epoll(7)`), closed when released.
///
/// Registrations may be changed from any thread while another waits: the
/// kernel serializes `epoll_ctl(2)` against `epoll_wait(2)`.
public final class Epoll: Sendable {
    /// The epoll descriptor itself.
    public let rawValue: CInt

    /// Creates an instance with `EPOLL_CLOEXEC` (`epoll_create1(2)`).
    /// - Throws: ``Errno`` (`EMFILE` when out of descriptors).
    public init() throws(Errno) {
        rawValue = try retryingOnInterrupt("epoll_create1") { csystem_epoll_create1(CSYSTEM_EPOLL_CLOEXEC) }
    }

    deinit { _ = Glibc.close(rawValue) }

    /// Watches `descriptor` for `events`; `data` comes back with each event.
    /// - Throws: ``Errno``; `EEXIST` when `descriptor` is already watched.
    public func add(_ descriptor: CInt, events: EpollEvents, data: UInt64) throws(Errno) {
        try control(CSYSTEM_EPOLL_CTL_ADD, descriptor, events, data, "epoll_ctl ADD")
    }

    /// Changes what `descriptor` is watched for.
    /// - Throws: ``Errno``; `ENOENT` when `descriptor` is not watched.
    public func modify(_ descriptor: CInt, events: EpollEvents, data: UInt64) throws(Errno) {
        try control(CSYSTEM_EPOLL_CTL_MOD, descriptor, events, data, "epoll_ctl MOD")
    }

    /// Stops watching `descriptor` (closing it does the same).
    /// - Throws: ``Errno``; `ENOENT` when `descriptor` is not watched.
    public func remove(_ descriptor: CInt) throws(Errno) {
        try control(CSYSTEM_EPOLL_CTL_DEL, descriptor, [], 0, "epoll_ctl DEL")
    }

    /// Waits for events (`epoll_wait(2)`).
    ///
    /// Not retried on `EINTR`, by design: an interrupted wait returns 0
    /// events, so a caller's own timeout bookkeeping stays right.
    /// - Parameter timeout: milliseconds, or -1 to wait indefinitely.
    /// - Returns: how many entries of `buffer` were filled.
    public func wait(into buffer: EpollEventBuffer, timeout: CInt) throws(Errno) -> Int {
        let count = csystem_epoll_wait(rawValue, buffer.storage, CInt(buffer.capacity), timeout)
        if count < 0 {
            if errno == EINTR { return 0 }
            throw Errno.current("epoll_wait")
        }
        return Int(count)
    }

    private func control(
        _ operation: CInt, _ descriptor: CInt, _ events: EpollEvents, _ data: UInt64, _ name: String
    ) throws(Errno) {
        _ = try retryingOnInterrupt(name) { csystem_epoll_ctl(rawValue, operation, descriptor, events.rawValue, data) }
    }
}

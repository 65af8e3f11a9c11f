#if canImport(Glibc)
import Glibc
#endif

/// An epoll instance (`epoll(7)`), closed when released.
///
/// Registrations may be changed from any thread while another waits: the
/// kernel serializes `epoll_ctl(2)` against `epoll_wait(2)`.
public final class Epoll: Sendable {
    /// The epoll descriptor itself.
    public let rawValue: CInt

    private static let add: CInt = 1, remove: CInt = 2, modify: CInt = 3

    /// Creates an instance with `EPOLL_CLOEXEC` (`epoll_create1(2)`).
    /// - Throws: ``Errno`` (`ENOSYS` when libc lacks epoll).
    public init() throws(Errno) {
        guard let create = GlibcExtras.epollCreate1 else { throw Errno(ENOSYS, operation: "epoll_create1") }
        let fd = create(O_CLOEXEC)
        guard fd >= 0 else { throw Errno.current("epoll_create1") }
        rawValue = fd
    }

    deinit { _ = Glibc.close(rawValue) }

    /// Watches `descriptor` for `events`; `data` comes back with each event.
    public func add(_ descriptor: CInt, events: EpollEvents, data: UInt64) throws(Errno) {
        try control(Self.add, descriptor, events, data, "epoll_ctl ADD")
    }

    /// Changes what `descriptor` is watched for.
    public func modify(_ descriptor: CInt, events: EpollEvents, data: UInt64) throws(Errno) {
        try control(Self.modify, descriptor, events, data, "epoll_ctl MOD")
    }

    /// Stops watching `descriptor` (closing it does the same).
    public func remove(_ descriptor: CInt) throws(Errno) {
        try control(Self.remove, descriptor, [], 0, "epoll_ctl DEL")
    }

    /// Waits for events (`epoll_wait(2)`); EINTR returns 0 events rather than retrying,
    /// so a caller's own timeout bookkeeping stays right.
    /// - Parameter timeout: milliseconds, or -1 to wait indefinitely.
    /// - Returns: how many entries of `buffer` were filled.
    public func wait(into buffer: EpollEventBuffer, timeout: CInt) throws(Errno) -> Int {
        guard let wait = GlibcExtras.epollWait else { throw Errno(ENOSYS, operation: "epoll_wait") }
        let count = wait(rawValue, buffer.storage, CInt(buffer.capacity), timeout)
        if count < 0 {
            if errno == EINTR { return 0 }
            throw Errno.current("epoll_wait")
        }
        return Int(count)
    }

    private func control(
        _ operation: CInt, _ descriptor: CInt, _ events: EpollEvents, _ data: UInt64, _ name: String
    ) throws(Errno) {
        guard let control = GlibcExtras.epollControl else { throw Errno(ENOSYS, operation: name) }
        let result = withUnsafeTemporaryAllocation(
            byteCount: EpollEventBuffer.stride, alignment: 8
        ) { event -> CInt in
            EpollEventBuffer.store(events, data, at: event.baseAddress.unsafelyUnwrapped)
            return control(rawValue, operation, descriptor, event.baseAddress)
        }
        if result < 0 { throw Errno.current(name) }
    }
}

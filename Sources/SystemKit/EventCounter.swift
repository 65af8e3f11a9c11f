#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// A kernel event counter (`eventfd(2)`), non-blocking and close-on-exec,
/// used to wake an epoll loop from another thread. Closed when released.
public final class EventCounter: Sendable {
    /// The eventfd descriptor, to register with an ``Epoll``.
    public let rawValue: CInt

    /// Creates a counter at zero.
    /// - Throws: ``Errno`` (`EMFILE` when out of descriptors).
    public init() throws(Errno) {
        rawValue = try retryingOnInterrupt("eventfd") {
            csystem_eventfd(0, CSYSTEM_EFD_CLOEXEC | CSYSTEM_EFD_NONBLOCK)
        }
    }

    deinit { _ = Glibc.close(rawValue) }

    /// Adds one, making the descriptor readable. Safe from any thread.
    public func signal() {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated: the waiter is woken anyway.
        _ = try? retryingOnInterrupt("write eventfd") { Glibc.write(rawValue, &one, MemoryLayout<UInt64>.size) }
    }

    /// Resets the counter to zero so the descriptor stops being readable.
    public func drain() {
        var value: UInt64 = 0
        _ = try? retryingOnInterrupt("read eventfd") { Glibc.read(rawValue, &value, MemoryLayout<UInt64>.size) }
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// A joinable POSIX thread running a Swift closure (`pthread_create(3)`).
///
/// For loops that block in system calls (epoll, PAM, poll): they belong on
/// their own threads, never on Swift's cooperative pool.
public struct SystemThread: Sendable {
    /// The thread's handle.
    public let handle: pthread_t

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (truncated to the kernel's
    /// 15 bytes, shown by `ps -L` and in core dumps).
    ///
    /// `body` is `sending`: it may own non-Sendable state (a descriptor, a
    /// buffer) that the caller hands over and no longer touches.
    /// - Throws: ``Errno`` from `pthread_create(3)` (`EAGAIN` when out of threads).
    public static func spawn(
        name: String, _ body: sending @escaping () -> Void
    ) throws(Errno) -> SystemThread {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
            let name = String(start.name.utf8.prefix(CSYSTEM_THREAD_NAME_MAX)) ?? "swift-thread"
            _ = csystem_set_thread_name(name)
            start.body()
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw Errno(result, operation: "pthread_create \(name)")
        }
        return SystemThread(handle: handle)
    }

    /// Whether the calling thread is this one.
    public var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// Waits for the thread to finish (`pthread_join(3)`). Call once, from another thread.
    public func join() {
        precondition(!isCurrent, "a thread cannot join itself")
        _ = pthread_join(handle, nil)
    }

    /// Lets the thread's resources go when it ends, for a thread nobody will
    /// join (`pthread_detach(3)`). Call at most once, instead of ``join()``.
    public func detach() {
        _ = pthread_detach(handle)
    }

    /// Blocks the calling thread for `duration` (`nanosleep(2)`), sleeping on
    /// for the time left when a signal handler interrupts it.
    public static func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        // nanosleep fails otherwise only for a malformed request, which this is not.
        _ = try? retryingOnInterrupt("nanosleep") {
            let result = nanosleep(&request, &remaining)
            if result != 0 { request = remaining }
            return result
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Process descriptors (pidfds): a handle on one process that a recycled pid
/// can never be mistaken for.
public enum ProcessHandle {
    /// Whether the process behind `pidfd` is still running (`pidfd_send_signal` with signal 0).
    ///
    /// A process that has exited but not yet been reaped still counts as alive.
    /// `EPERM` counts as alive too: the kernel finds the process before it
    /// checks permission, so a caller without `CAP_KILL` asking about another
    /// user's process is told it exists, not that it exited (`ESRCH`).
    public static func isAlive(pidfd: CInt) -> Bool {
        csystem_pidfd_send_signal(pidfd, 0, 0) == 0 || errno == EPERM
    }

    /// A pidfd for `pid` (`pidfd_open(2)`), for kernels whose sockets lack
    /// `SO_PEERPIDFD`; nil when there is no such process (`ESRCH`) or the call
    /// fails otherwise.
    /// Sends `signal` to the process behind `pidfd` (`pidfd_send_signal(2)`).
    /// - Returns: whether it was sent.
    @discardableResult
    public static func send(_ signal: CInt, to pidfd: CInt) -> Bool {
        csystem_pidfd_send_signal(pidfd, signal, 0) == 0
    }

    public static func open(pid: pid_t) -> FileDescriptor? {
        let fd = csystem_pidfd_open(pid, 0)
        return fd >= 0 ? FileDescriptor(taking: fd) : nil
    }
}

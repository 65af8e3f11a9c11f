#if canImport(Glibc)
import Glibc
#endif

/// Process descriptors (pidfds): a handle on one process that a recycled pid
/// can never be mistaken for.
public enum ProcessHandle {
    /// Whether the process behind `pidfd` is still running (`pidfd_send_signal` with signal 0).
    public static func isAlive(pidfd: CInt) -> Bool {
        guard let sendSignal = GlibcExtras.pidfdSendSignal else { return true }
        return sendSignal(pidfd, 0, nil, 0) == 0
    }

    /// A pidfd for `pid` (`pidfd_open(2)`), for kernels whose sockets lack `SO_PEERPIDFD`.
    public static func open(pid: pid_t) -> FileDescriptor? {
        guard let openFunction = GlibcExtras.pidfdOpen else { return nil }
        let fd = openFunction(pid, 0)
        return fd >= 0 ? FileDescriptor(taking: fd) : nil
    }
}

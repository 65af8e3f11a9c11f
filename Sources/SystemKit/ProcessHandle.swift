#if canImport(Glibc)
import Glibc
#endif

/// Process descriptors (pidfds): a handle on one process that a recycled pid
/// can never be mistaken for.
public enum ProcessHandle {
    private typealias SendSignal = @convention(c) (CInt, CInt, UnsafeMutableRawPointer?, CUnsignedInt) -> CInt
    private typealias Open = @convention(c) (pid_t, CUnsignedInt) -> CInt

    // glibc 2.36 exports these; they are declared only under _GNU_SOURCE, which the
    // Glibc module does not define, so they are found by name (nil handle = RTLD_DEFAULT).
    nonisolated(unsafe) private static let sendSignal: SendSignal? =
        dlsym(nil, "pidfd_send_signal").map { unsafeBitCast($0, to: SendSignal.self) }
    nonisolated(unsafe) private static let openFunction: Open? =
        dlsym(nil, "pidfd_open").map { unsafeBitCast($0, to: Open.self) }

    /// Whether the process behind `pidfd` is still running (`pidfd_send_signal` with signal 0).
    public static func isAlive(pidfd: CInt) -> Bool {
        guard let sendSignal else { return true }
        return sendSignal(pidfd, 0, nil, 0) == 0
    }

    /// A pidfd for `pid` (`pidfd_open(2)`), for kernels whose sockets lack `SO_PEERPIDFD`.
    public static func open(pid: pid_t) -> FileDescriptor? {
        guard let openFunction else { return nil }
        let fd = openFunction(pid, 0)
        return fd >= 0 ? FileDescriptor(taking: fd) : nil
    }
}

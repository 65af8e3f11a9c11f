#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// `SIGCHLD` as a descriptor a thread can poll (`signalfd(2)`): readable
/// when a child of this process stopped, continued or ended. A pidfd says
/// only that a process ended; a parent learns of a stop from `SIGCHLD`.
///
/// Works only in a process that blocks `SIGCHLD` in every thread (the
/// Guard blocks it before its first thread starts); elsewhere ``open()``
/// returns nil and the caller falls back to looking at intervals.
public final class ChildSignal {
    public let descriptor: FileDescriptor

    private init(descriptor: FileDescriptor) {
        self.descriptor = descriptor
    }

    /// nil when the calling thread does not block `SIGCHLD`, or no signalfd can be made.
    public static func open() -> ChildSignal? {
        let fd = csystem_child_signal_fd()
        guard fd >= 0 else { return nil }
        return ChildSignal(descriptor: FileDescriptor(taking: fd))
    }

    /// Takes every pending `SIGCHLD`, so the descriptor waits for the next one.
    public func drain() {
        csystem_child_signal_drain(descriptor.rawValue)
    }

    /// Blocks `SIGCHLD` in the calling thread and the threads it starts afterwards.
    public static func block() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGCHLD)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }
}

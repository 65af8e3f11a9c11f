#if canImport(Glibc)
import Glibc
#endif

/// Unix stream socket calls (`socket(7)`, `unix(7)`), with `EINTR` retried and
/// failures as ``Errno``.
public enum Socket {
    /// `SO_PEERPIDFD`, from Linux 6.5; not yet in every libc's headers.
    public static let peerPIDFDOption: CInt = 77

    /// A new `AF_UNIX` stream socket, close-on-exec (`socket(2)`).
    public static func makeUnixStream(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= CInt(SOCK_NONBLOCK.rawValue) }
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, type, 0) }
        return FileDescriptor(taking: fd)
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket
    /// (`accept4(2)`), so no child process forked meanwhile inherits it.
    /// - Returns: nil when no connection is waiting (`EAGAIN`).
    /// - Throws: ``Errno``; `EMFILE`/`ENFILE` mean the descriptor table is full.
    public static func accept(_ listener: CInt) throws(Errno) -> FileDescriptor? {
        guard let accept4 = GlibcExtras.accept4 else { throw Errno(ENOSYS, operation: "accept4") }
        let flags = CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue)
        while true {
            let fd = accept4(listener, nil, nil, flags)
            if fd >= 0 { return FileDescriptor(taking: fd) }
            switch errno {
            // ECONNABORTED: the client gave up while queued; try the next one.
            case EINTR, ECONNABORTED: continue
            case EAGAIN: return nil
            default: throw Errno.current("accept4")
            }
        }
    }

    /// The credentials the kernel recorded for the peer of `socket` (`SO_PEERCRED`).
    public static func peerCredentials(of socket: CInt) throws(Errno) -> PeerCredentials {
        // struct ucred is three 32-bit fields: pid, uid, gid. Glibc exports it
        // only under _GNU_SOURCE, so read it as a homogeneous tuple.
        var raw: (UInt32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        let result = getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &raw, &length)
        guard result == 0 else { throw Errno.current("getsockopt SO_PEERCRED") }
        return PeerCredentials(pid: pid_t(bitPattern: raw.0), uid: raw.1, gid: raw.2)
    }

    /// A pidfd for the peer of `socket` (`SO_PEERPIDFD`), pinning the very process
    /// that connected even if its pid is later reused.
    /// - Returns: nil when the kernel predates the option (`ENOPROTOOPT`) or the
    ///   peer has no process to pin (`ENODATA`, `ESRCH`).
    public static func peerPIDFD(of socket: CInt) throws(Errno) -> FileDescriptor? {
        var fd: CInt = -1
        var length = socklen_t(MemoryLayout<CInt>.size)
        if getsockopt(socket, SOL_SOCKET, peerPIDFDOption, &fd, &length) == 0, fd >= 0 {
            return FileDescriptor(taking: fd)
        }
        switch errno {
        case ENOPROTOOPT, ENODATA, ESRCH, EINVAL: return nil
        default: throw Errno.current("getsockopt SO_PEERPIDFD")
        }
    }

    /// Sends what it can of `bytes` without blocking and without `SIGPIPE`
    /// (`send(2)` with `MSG_DONTWAIT | MSG_NOSIGNAL`).
    /// - Returns: bytes sent; 0 when the socket buffer is full (`EAGAIN`).
    /// - Throws: ``Errno``, `EPIPE` or `ECONNRESET` once the peer is gone.
    public static func sendNonBlocking(_ socket: CInt, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        while true {
            let sent = Glibc.send(socket, bytes.baseAddress, bytes.count, CInt(MSG_DONTWAIT | MSG_NOSIGNAL))
            if sent >= 0 { return sent }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default: throw Errno.current("send")
            }
        }
    }

    /// Turns `O_NONBLOCK` on or off (`fcntl(2)` `F_SETFL`).
    public static func setNonBlocking(_ descriptor: CInt, _ nonBlocking: Bool) throws(Errno) {
        let flags = try retryingOnInterrupt("fcntl F_GETFL") { fcntl(descriptor, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags {
            _ = try retryingOnInterrupt("fcntl F_SETFL") { fcntl(descriptor, F_SETFL, wanted) }
        }
    }
}

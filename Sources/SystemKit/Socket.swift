#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Unix stream socket calls (`socket(7)`, `unix(7)`), with interrupted calls
/// retried (``retryingOnInterrupt(_:_:)``) and failures as ``Errno``.
public enum Socket {
    /// `SO_PEERPIDFD`, from Linux 6.5; not yet in every libc's headers.
    public static let peerPIDFDOption: CInt = CSYSTEM_SO_PEERPIDFD

    /// A new `AF_UNIX` stream socket, close-on-exec (`socket(2)`).
    public static func makeUnixStream(nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= CInt(SOCK_NONBLOCK.rawValue) }
        let fd = try retryingOnInterrupt("socket") { socket(AF_UNIX, type, 0) }
        return FileDescriptor(taking: fd)
    }

    /// A connected pair of `AF_UNIX` stream sockets, close-on-exec
    /// (`socketpair(2)`): one end for this process, the other for a child's
    /// standard input and output.
    public static func makeStreamPair() throws(Errno) -> (FileDescriptor, FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        _ = try retryingOnInterrupt("socketpair") { socketpair(AF_UNIX, type, 0, &ends) }
        return (FileDescriptor(taking: ends[0]), FileDescriptor(taking: ends[1]))
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket
    /// (`accept4(2)`), so no child process forked meanwhile inherits it.
    /// - Returns: nil when no connection is waiting (`EAGAIN`).
    /// - Throws: ``Errno``; `EMFILE`/`ENFILE` mean the descriptor table is full.
    public static func accept(_ listener: CInt) throws(Errno) -> FileDescriptor? {
        let flags = CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue)
        while true {
            do {
                let fd = try retryingOnInterrupt("accept4") { csystem_accept4(listener, nil, nil, flags) }
                return FileDescriptor(taking: fd)
            } catch where error.rawValue == ECONNABORTED {
                continue  // The client gave up while queued; try the next one.
            } catch where error.rawValue == EAGAIN {
                return nil
            }
        }
    }

    /// The credentials the kernel recorded for the peer of `socket` (`SO_PEERCRED`).
    public static func peerCredentials(of socket: CInt) throws(Errno) -> PeerCredentials {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        guard csystem_peer_credentials(socket, &pid, &uid, &gid) == 0 else {
            throw Errno.current("getsockopt SO_PEERCRED")
        }
        return PeerCredentials(pid: pid, uid: uid, gid: gid)
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
        do {
            return try retryingOnInterrupt("send") {
                Glibc.send(socket, bytes.baseAddress, bytes.count, CInt(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
        } catch where error.rawValue == EAGAIN {
            return 0
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

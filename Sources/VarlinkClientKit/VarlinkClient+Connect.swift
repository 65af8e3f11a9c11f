#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension VarlinkClient {
    /// Connects a new socket to `path`, waiting up to `timeout` while the
    /// service's accept queue is full, and returns it in blocking mode.
    package static func connect(to path: String, timeout: Duration) throws(VarlinkClientError) -> FileDescriptor {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw .invalidSocketPath(path) }
        let socket: FileDescriptor
        do { socket = try Socket.makeUnixStream(nonBlocking: true) } catch { throw .system(error) }
        let deadline = MonotonicInstant.now + timeout
        var pause = Duration.milliseconds(1)
        while true {
            let code = attempt(socket.rawValue, address)
            switch code {
            case 0, EISCONN:
                do { try Socket.setNonBlocking(socket.rawValue, false) } catch { throw .system(error) }
                return socket
            case EAGAIN:
                // A Unix socket's full accept queue: connect cannot wait for
                // room without blocking, so retry until the deadline.
                let left = MonotonicInstant.now.duration(to: deadline)
                guard left > .zero else { throw .connectTimedOut(path) }
                SystemThread.sleep(for: min(pause, left))
                pause = min(pause * 2, .milliseconds(50))
            case EINPROGRESS:
                try waitForConnect(socket.rawValue, path: path, deadline: deadline)
            case ENOENT, ENOTDIR: throw .noSuchSocket(path)
            case ECONNREFUSED: throw .connectionRefused(path)
            case EACCES, EPERM: throw .permissionDenied(path)
            default: throw .connectFailed(path, Errno(code, operation: "connect \(path)"))
            }
        }
    }

    /// One `connect(2)`, retried if interrupted; 0 or the errno it failed with.
    private static func attempt(_ socket: CInt, _ address: UnixSocketAddress) -> CInt {
        do {
            try address.withSocketAddress { pointer, length throws(Errno) in
                _ = try retryingOnInterrupt("connect") { Glibc.connect(socket, pointer, length) }
            }
            return 0
        } catch {
            return error.rawValue
        }
    }

    /// Waits for an in-progress connect and turns its outcome into `EISCONN`
    /// (done) or the error, so the caller's switch handles both.
    private static func waitForConnect(
        _ socket: CInt, path: String, deadline: MonotonicInstant
    ) throws(VarlinkClientError) {
        let ready: Int16?
        do { ready = try Poll.wait(for: Int16(POLLOUT), on: socket, until: deadline) } catch { throw .system(error) }
        guard ready != nil else { throw .connectTimedOut(path) }
        var code: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = getsockopt(socket, SOL_SOCKET, SO_ERROR, &code, &length)
        switch code {
        case 0: return
        case ECONNREFUSED: throw .connectionRefused(path)
        case EACCES, EPERM: throw .permissionDenied(path)
        default: throw .connectFailed(path, Errno(code, operation: "connect \(path)"))
        }
    }
}

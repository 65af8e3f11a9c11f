#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

extension VarlinkServer {
    /// What is at `path`: nothing, a live server, a stale socket file, or
    /// something else. Connecting is the only reliable test: a socket file
    /// outlives the process that made it.
    package static func probeSocket(at path: String) -> VarlinkSocketState {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            return errno == ENOENT ? .absent : .unknown(Errno.current("lstat \(path)"))
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else { return .notASocket }
        do {
            let address = try UnixSocketAddress(path: path)
            let socket = try Socket.makeUnixStream(nonBlocking: true)
            let code = try address.withSocketAddress { pointer, length throws(Errno) in
                connect(socket.rawValue, pointer, length) == 0 ? 0 : errno
            }
            switch code {
            // EAGAIN: a full accept queue, so someone is listening.
            case 0, EAGAIN, EINPROGRESS: return .live
            case ECONNREFUSED: return .stale
            default: return .unknown(Errno(code, operation: "connect \(path)"))
            }
        } catch {
            return .unknown(error)
        }
    }

    /// A non-blocking socket bound to `path`, with `mode`, listening.
    static func makeListener(path: String, mode: mode_t, backlog: CInt) throws(VarlinkServerError) -> FileDescriptor {
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch { throw .invalidSocketPath(path) }
        let socket: FileDescriptor
        do { socket = try Socket.makeUnixStream(nonBlocking: true) } catch { throw .setupFailed(error) }
        let bound = try? address.withSocketAddress { pointer, length throws(Errno) in
            bind(socket.rawValue, pointer, length) == 0 ? 0 : errno
        }
        switch bound ?? EINVAL {
        case 0: break
        case EADDRINUSE: throw .addressInUse(path)
        case EACCES, EPERM: throw .permissionDenied(path)
        case let code: throw .cannotListen(path, Errno(code, operation: "bind"))
        }
        // chmod before listen: no client can connect while the mode is still the umask's.
        if chmod(path, mode) != 0 {
            let error = Errno.current("chmod")
            unlink(path)
            throw .cannotListen(path, error)
        }
        if listen(socket.rawValue, backlog) != 0 {
            let error = Errno.current("listen")
            unlink(path)
            throw .cannotListen(path, error)
        }
        return socket
    }

    /// Checks that `descriptor` is a listening Unix stream socket and makes it
    /// non-blocking and close-on-exec.
    static func adoptListener(_ descriptor: CInt) throws(VarlinkServerError) -> FileDescriptor {
        func option(_ name: CInt) -> CInt? {
            var value: CInt = 0
            var length = socklen_t(MemoryLayout<CInt>.size)
            return getsockopt(descriptor, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard option(SO_ACCEPTCONN) == 1, option(SO_DOMAIN) == AF_UNIX,
              option(SO_TYPE) == CInt(SOCK_STREAM.rawValue)
        else { throw .notAListeningSocket(descriptor) }
        do {
            try Socket.setNonBlocking(descriptor, true)
        } catch {
            throw .setupFailed(error)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return FileDescriptor(taking: descriptor)
    }
}

import SystemKit
import Varlink

/// Why a ``VarlinkServer`` could not start.
package enum VarlinkServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The socket path is empty, contains a NUL, or does not fit `sun_path`.
    case invalidSocketPath(String)
    /// Something already exists at the path (`EADDRINUSE`): see ``VarlinkServer/probeSocket(at:)``.
    case addressInUse(String)
    /// The directory does not allow creating the socket (`EACCES`).
    case permissionDenied(String)
    /// `bind(2)`, `chmod(2)` or `listen(2)` failed otherwise.
    case cannotListen(String, Errno)
    /// An adopted descriptor is not a listening Unix stream socket.
    case notAListeningSocket(CInt)
    /// epoll, eventfd or the loop thread could not be created.
    case setupFailed(Errno)

    package var description: String {
        switch self {
        case .invalidSocketPath(let path): "invalid socket path \"\(path)\""
        case .addressInUse(let path): "\(path) already exists; remove it if no server is listening there"
        case .permissionDenied(let path): "permission denied creating socket \(path)"
        case .cannotListen(let path, let errno): "cannot listen on \(path): \(errno)"
        case .notAListeningSocket(let fd): "descriptor \(fd) is not a listening Unix stream socket"
        case .setupFailed(let errno): "cannot start the Varlink server: \(errno)"
        }
    }
}

import SystemKit
import Varlink

/// Why a Varlink client call did not return a result.
package enum VarlinkClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The socket path is empty, contains a NUL, or is longer than `sun_path` holds.
    case invalidSocketPath(String)
    /// Nothing exists at the socket path (`ENOENT`): the service is not installed or not running.
    case noSuchSocket(String)
    /// The socket file exists but nothing listens on it (`ECONNREFUSED`): a stale socket.
    case connectionRefused(String)
    /// The caller may not connect to the socket (`EACCES`, `EPERM`).
    case permissionDenied(String)
    /// The service's accept queue stayed full until the connect timeout.
    case connectTimedOut(String)
    /// Connecting failed for another reason.
    case connectFailed(String, Errno)
    /// The call is malformed before it is sent: bad method name, or oneway with more.
    case invalidCall(VarlinkMessageError)
    /// No reply arrived in time. After ``VarlinkClient/call(_:parameters:timeout:)``
    /// the connection is closed, since a late reply would be taken for the next call's.
    case timedOut
    /// The service closed the connection.
    case connectionClosed
    /// ``VarlinkClientInterrupter/interrupt()`` ended the wait.
    case interrupted
    /// ``VarlinkClient/close()`` was called earlier.
    case clientClosed
    /// A reply frame exceeded the client's maximum frame size.
    case replyTooLarge(limit: Int)
    /// A reply frame is not a valid Varlink reply.
    case invalidReply(VarlinkMessageError)
    /// The service broke the protocol, such as `continues` on a call without `more`.
    case protocolViolation(String)
    /// The service answered with an error reply.
    case remote(VarlinkError)
    /// A system call failed.
    case system(Errno)

    package var description: String {
        switch self {
        case .invalidSocketPath(let path): "invalid Varlink socket path \"\(path)\""
        case .noSuchSocket(let path): "no Varlink service at \(path): the socket does not exist"
        case .connectionRefused(let path): "no Varlink service listening at \(path) (connection refused)"
        case .permissionDenied(let path): "permission denied connecting to \(path)"
        case .connectTimedOut(let path): "timed out connecting to \(path)"
        case .connectFailed(let path, let errno): "cannot connect to \(path): \(errno)"
        case .invalidCall(let reason): "invalid call: \(reason)"
        case .timedOut: "timed out waiting for a Varlink reply"
        case .connectionClosed: "the Varlink service closed the connection"
        case .interrupted: "the wait for a Varlink reply was interrupted"
        case .clientClosed: "the Varlink connection was already closed"
        case .replyTooLarge(let limit): "Varlink reply exceeds \(limit) bytes"
        case .invalidReply(let reason): "invalid Varlink reply: \(reason)"
        case .protocolViolation(let what): "Varlink protocol violation: \(what)"
        case .remote(let error): "Varlink error reply: \(error)"
        case .system(let errno): "\(errno)"
        }
    }
}

import SystemKit
import Varlink

/// What is at a socket path, for deciding whether a server may replace it.
package enum VarlinkSocketState: Equatable, Sendable, CustomStringConvertible {
    /// Nothing exists at the path.
    case absent
    /// A server accepts connections there: do not replace it.
    case live
    /// A socket file nobody listens on (`ECONNREFUSED`): safe to unlink.
    case stale
    /// The path exists but is not a socket: leave it alone.
    case notASocket
    /// The check itself failed (permission, say).
    case unknown(Errno)

    package var description: String {
        switch self {
        case .absent: "absent"
        case .live: "live"
        case .stale: "stale"
        case .notASocket: "not a socket"
        case .unknown(let errno): "unknown (\(errno))"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Varlink

/// The process on the other end of a connection, as the kernel reported it at
/// accept time; never what the client claims.
///
/// Sendable although ``pidfd`` is a non-Sendable ``FileDescriptor``: every
/// stored property is immutable, and the pidfd is only read (its `rawValue`
/// passed to `pidfd_send_signal`, `waitid`, …) and is closed when the peer is
/// released. Never call `close()` on it.
package final class VarlinkPeer: @unchecked Sendable, CustomStringConvertible {
    /// Process, user and group IDs (`SO_PEERCRED`).
    package let credentials: PeerCredentials
    /// A descriptor pinning the connecting process (`SO_PEERPIDFD`), so a
    /// recycled pid cannot impersonate it; nil on kernels before Linux 6.5.
    package let pidfd: FileDescriptor?

    /// Wraps what the kernel reported; the peer owns `pidfd` from now on.
    package init(credentials: PeerCredentials, pidfd: FileDescriptor?) {
        self.credentials = credentials
        self.pidfd = pidfd
    }

    /// The peer's effective user ID at connect time.
    package var uid: uid_t { credentials.uid }
    /// The peer's effective group ID at connect time.
    package var gid: gid_t { credentials.gid }
    /// The peer's process ID at connect time.
    package var pid: pid_t { credentials.pid }

    package var description: String { "\(credentials)\(pidfd == nil ? "" : " (pidfd)")" }
}

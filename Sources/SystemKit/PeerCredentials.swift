#if canImport(Glibc)
import Glibc
#endif

/// The process at the other end of a Unix socket, as the kernel recorded it
/// when the connection was made (`SO_PEERCRED`, `struct ucred`).
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    /// The peer's process ID at connect time.
    public var pid: pid_t
    /// The peer's effective user ID at connect time.
    public var uid: uid_t
    /// The peer's effective group ID at connect time.
    public var gid: gid_t

    /// Credentials as given (tests, or values read elsewhere).
    public init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}

#if canImport(Glibc)
import Glibc
#endif

/// A filesystem `AF_UNIX` address (`struct sockaddr_un`, `unix(7)`).
public struct UnixSocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The socket file's path.
    public let path: String

    /// The longest path `sun_path` holds, leaving room for the terminating NUL.
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Wraps `path`.
    /// - Throws: ``Errno`` `ENAMETOOLONG` when the path does not fit `sun_path`,
    ///   `EINVAL` when it is empty or contains a NUL byte.
    public init(path: String) throws(Errno) {
        let bytes = path.utf8
        guard !bytes.isEmpty, !bytes.contains(0) else { throw Errno(EINVAL, operation: "socket path \(path)") }
        guard bytes.count <= Self.maximumPathLength else {
            throw Errno(ENAMETOOLONG, operation: "socket path \(path)")
        }
        self.path = path
    }

    public var description: String { path }

    /// Calls `body` with the C address and its length, for `bind(2)` and `connect(2)`.
    public func withSocketAddress<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(Errno) -> Result
    ) throws(Errno) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
        }
        // The pointer cast is safe: sockaddr_un begins with the sockaddr header.
        return try withUnsafePointer(to: &address) { pointer throws(Errno) -> Result in
            let length = socklen_t(MemoryLayout<sa_family_t>.size + path.utf8.count + 1)
            return try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic throws(Errno) in
                try body(generic, length)
            }
        }
    }
}

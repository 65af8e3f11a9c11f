#if canImport(Glibc)
import Glibc
#endif

/// An error number from a failed system call, with the call's name for context.
///
/// Maps to `errno` and `strerror(3)`.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` value.
    public let rawValue: CInt
    /// The system call or operation that failed, for messages.
    public let operation: String

    public init(_ rawValue: CInt, operation: String = "") {
        self.rawValue = rawValue
        self.operation = operation
    }

    /// The current thread's `errno`, tagged with `operation`.
    public static func current(_ operation: String) -> Errno {
        Errno(errno, operation: operation)
    }

    public var description: String {
        let message = String(cString: strerror(rawValue))
        return operation.isEmpty ? message : "\(operation): \(message)"
    }

    public static func == (lhs: Errno, rhs: Errno) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

/// Runs a system call, retrying while it fails with `EINTR`.
///
/// The one place in the project that retries `EINTR`. Never use it for `close(2)`.
/// - Returns: the call's non-negative result.
/// - Throws: ``Errno`` for any other failure.
@inlinable
public func retryingOnInterrupt<T: BinaryInteger>(
    _ operation: String, _ body: () -> T
) throws(Errno) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = errno
        if code != EINTR { throw Errno(code, operation: operation) }
    }
}

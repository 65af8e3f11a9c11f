#if canImport(Glibc)
import Glibc
#endif

/// An owned file descriptor, closed exactly once when the value is released.
///
/// Not thread-safe: one owner at a time.
public final class FileDescriptor {
    /// The raw descriptor; valid while this object lives.
    public let rawValue: CInt
    private var isClosed = false

    /// Takes ownership of `rawValue`.
    public init(taking rawValue: CInt) {
        precondition(rawValue >= 0, "FileDescriptor requires a valid descriptor")
        self.rawValue = rawValue
    }

    /// Closes the descriptor now rather than at release. `close(2)` is not retried.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(rawValue)
    }

    deinit { close() }

    /// Opens a path (`open(2)`), retrying when interrupted. `O_CLOEXEC` is always added.
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0) throws(Errno) -> FileDescriptor {
        let fd = try retryingOnInterrupt("open \(path)") { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(taking: fd)
    }

    /// Reads up to `count` bytes into `buffer` (`read(2)`); 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryingOnInterrupt("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes` (`write(2)`), looping over short writes.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingOnInterrupt("write") {
                Glibc.write(rawValue, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            offset += written
        }
    }

    /// Writes all of `bytes`.
    public func writeAll(_ bytes: [UInt8]) throws(Errno) {
        var failure: Errno?
        bytes.withUnsafeBytes { buffer in
            do throws(Errno) { try writeAll(buffer) } catch { failure = error }
        }
        if let failure { throw failure }
    }
}

extension FileDescriptor {
    /// Reads to the end of the file, or to `limit` bytes, whichever comes
    /// first: a caller that must refuse a longer file asks for one byte more
    /// than it accepts.
    public func readAll(limit: Int) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < limit {
            var failure: Errno?
            let count = chunk.withUnsafeMutableBytes { buffer -> Int in
                do throws(Errno) { return try read(into: buffer) } catch { failure = error; return 0 }
            }
            if let failure { throw failure }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<min(count, limit - bytes.count)])
        }
        return bytes
    }

    /// The contents of the file at `path`, up to `limit` bytes.
    public static func readFile(_ path: String, limit: Int) throws(Errno) -> [UInt8] {
        try open(path, O_RDONLY).readAll(limit: limit)
    }
}

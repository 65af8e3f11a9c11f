#if canImport(Glibc)
import Glibc
#endif

/// Reads one line at a time from a descriptor, byte by byte so nothing past the
/// newline is consumed (the next reader of the descriptor sees the rest), with
/// a deadline and a length bound.
public enum LineReader {
    /// Why no line came back.
    public enum Failure: Error, Hashable, Sendable {
        /// End of input before a newline.
        case endOfInput
        /// The deadline passed.
        case timedOut
        /// The line was longer than allowed.
        case tooLong
        /// Reading failed.
        case failed(Errno)
    }

    /// Reads bytes up to a newline (not included) into a zeroed-on-release buffer.
    /// - Parameters:
    ///   - descriptor: where to read (a terminal or standard input).
    ///   - maximumLength: lines longer than this fail with ``Failure/tooLong``.
    ///   - deadline: when to give up; nil waits forever.
    public static func readLine(
        from descriptor: CInt, maximumLength: Int = 4096, deadline: MonotonicInstant? = nil
    ) throws(Failure) -> SecretBytes {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: maximumLength + 1, alignment: 1)
        defer {
            SecretBytes.zero(buffer)
            buffer.deallocate()
        }
        var count = 0
        while true {
            try waitReadable(descriptor, deadline: deadline)
            var byte: UInt8 = 0
            let n: Int
            do {
                n = try retryingOnInterrupt("read") { read(descriptor, &byte, 1) }
            } catch where error.rawValue == EAGAIN {
                continue  // A non-blocking descriptor someone else read first: wait again.
            } catch {
                throw .failed(error)
            }
            if n == 0 {
                // End of input ends the line only if something came before it.
                if count == 0 { throw .endOfInput }
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            guard count < maximumLength else { throw .tooLong }
            buffer[count] = byte
            count += 1
        }
        if count > 0 && buffer[count - 1] == UInt8(ascii: "\r") { count -= 1 }
        return SecretBytes(copying: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    private static func waitReadable(_ descriptor: CInt, deadline: MonotonicInstant?) throws(Failure) {
        // A byte that arrives after the deadline is too late, even if it is already waiting.
        if let deadline, MonotonicInstant.now >= deadline { throw .timedOut }
        let ready: Int16?
        do {
            ready = try Poll.wait(for: Int16(POLLIN), on: descriptor, until: deadline)
        } catch {
            throw .failed(error)
        }
        if ready == nil { throw .timedOut }
    }
}

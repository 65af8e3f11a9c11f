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
        from descriptor: CInt, maximumLength: Int = 4096, deadline: ContinuousClock.Instant? = nil
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
            let n = read(descriptor, &byte, 1)
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .failed(.current("read"))
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

    private static func waitReadable(_ descriptor: CInt, deadline: ContinuousClock.Instant?) throws(Failure) {
        while true {
            var timeout: CInt = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                if left <= .zero { throw .timedOut }
                let (seconds, attoseconds) = left.components
                timeout = CInt(min(seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1, Int64(Int32.max)))
            }
            var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, timeout)
            if ready > 0 { return }
            if ready == 0 { continue }
            if errno == EINTR { continue }
            throw .failed(.current("poll"))
        }
    }
}

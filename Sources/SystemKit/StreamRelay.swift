#if canImport(Glibc)
import Glibc
#endif

/// Copies bytes both ways between a connected stream socket and a pair of
/// descriptors (standard input and output), without looking at them: the
/// remote end of `familyctl -H`, as systemd-stdio-bridge is systemctl's.
public enum StreamRelay {
    /// How much is read at once from either side.
    public static let chunkSize = 64 * 1024

    /// Relays until the socket's peer hangs up. The end of `input` is passed
    /// on as a half-close of the socket (`shutdown(2)` `SHUT_WR`), so the
    /// peer sees the end of the stream and may still answer. Each chunk is
    /// zeroed once passed on: a password may be among the bytes.
    /// - Throws: ``Errno`` from `poll(2)`, `read(2)`, `recv(2)`, `send(2)`
    ///   or `write(2)`; a reset by the socket's peer or a closed `output`
    ///   ends the relay without an error.
    public static func run(socket: CInt, input: CInt, output: CInt) throws(Errno) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer {
            SecretBytes.zero(buffer)
            buffer.deallocate()
        }
        var inputOpen = true
        while true {
            let ready = try Poll.wait(for: [(socket, Int16(POLLIN)), (inputOpen ? input : -1, Int16(POLLIN))])
            if ready[0] != 0 {
                let count: Int
                do {
                    count = try retryingOnInterrupt("recv") { recv(socket, buffer.baseAddress, buffer.count, 0) }
                } catch where error.rawValue == ECONNRESET {
                    return
                }
                if count == 0 { return }
                defer { SecretBytes.zero(UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])) }
                do {
                    try FileDescriptor.writeAll(output, UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                } catch where error.rawValue == EPIPE {
                    return
                }
            }
            if inputOpen && ready[1] != 0 {
                let count = try retryingOnInterrupt("read") { read(input, buffer.baseAddress, buffer.count) }
                if count == 0 {
                    inputOpen = false
                    _ = shutdown(socket, CInt(SHUT_WR))
                    continue
                }
                defer { SecretBytes.zero(UnsafeMutableRawBufferPointer(rebasing: buffer[..<count])) }
                var offset = 0
                while offset < count {
                    let sent: Int
                    do {
                        sent = try retryingOnInterrupt("send") {
                            send(socket, buffer.baseAddress.map { $0 + offset }, count - offset, CInt(MSG_NOSIGNAL))
                        }
                    } catch where error.rawValue == EPIPE || error.rawValue == ECONNRESET {
                        return
                    }
                    offset += sent
                }
            }
        }
    }
}

extension FileDescriptor {
    /// Writes all of `bytes` to the descriptor `raw` it does not own (`write(2)`).
    static func writeAll(_ raw: CInt, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try retryingOnInterrupt("write") {
                write(raw, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
        }
    }
}

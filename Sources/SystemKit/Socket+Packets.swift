#if canImport(Glibc)
import Glibc
#endif

/// Connected pairs of sequenced-packet sockets (`SOCK_SEQPACKET`): each send
/// arrives as one message, whole, so a small protocol between a process and
/// its helper needs no framing of its own.
extension Socket {
    /// A connected pair of `AF_UNIX` sequenced-packet sockets, close-on-exec
    /// (`socketpair(2)`), so no process started meanwhile inherits either end.
    public static func makePacketPair() throws(Errno) -> (FileDescriptor, FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        let type = CInt(SOCK_SEQPACKET.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        _ = try retryingOnInterrupt("socketpair") { socketpair(AF_UNIX, type, 0, &ends) }
        return (FileDescriptor(taking: ends[0]), FileDescriptor(taking: ends[1]))
    }

    /// Sends `parts` as one message (`sendmsg(2)`, `MSG_NOSIGNAL`): a secret
    /// goes out from its own buffer, never copied into a scratch one.
    public static func sendPacket(_ socket: CInt, _ parts: [UnsafeRawBufferPointer]) throws(Errno) {
        var vectors = parts.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        let total = parts.reduce(0) { $0 + $1.count }
        let sent = try vectors.withUnsafeMutableBufferPointer { (buffer) throws(Errno) -> Int in
            var message = msghdr()
            message.msg_iov = buffer.baseAddress
            message.msg_iovlen = buffer.count
            return try retryingOnInterrupt("sendmsg") { sendmsg(socket, &message, CInt(MSG_NOSIGNAL)) }
        }
        // A sequenced-packet socket sends a message whole or not at all.
        guard sent == total else { throw Errno(EMSGSIZE, operation: "sendmsg") }
    }

    /// Sends `bytes` as one message.
    public static func sendPacket(_ socket: CInt, _ bytes: [UInt8]) throws(Errno) {
        var failure: Errno?
        bytes.withUnsafeBytes { buffer in
            do throws(Errno) { try sendPacket(socket, [buffer]) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Receives one message into `bytes` (`recv(2)`).
    /// - Returns: its length; 0 when the peer closed its end.
    public static func receivePacket(_ socket: CInt, into bytes: inout [UInt8]) throws(Errno) -> Int {
        var failure: Errno?
        let length = bytes.withUnsafeMutableBytes { buffer -> Int in
            do throws(Errno) { return try receivePacket(socket, into: buffer) } catch { failure = error; return 0 }
        }
        if let failure { throw failure }
        return length
    }

    /// Receives one message into `buffer` (`recv(2)`).
    /// - Returns: its length; 0 when the peer closed its end.
    /// - Throws: ``Errno``; `EMSGSIZE` for a message longer than `buffer`,
    ///   whose rest the kernel has dropped.
    public static func receivePacket(_ socket: CInt, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        let length = try retryingOnInterrupt("recv") { recv(socket, buffer.baseAddress, buffer.count, CInt(MSG_TRUNC)) }
        guard length <= buffer.count else { throw Errno(EMSGSIZE, operation: "recv") }
        return length
    }

    /// The socket type of `descriptor` (`SO_TYPE`), or nil when it is not a socket.
    public static func type(of descriptor: CInt) -> CInt? {
        var type: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return nil }
        return type
    }

    /// `SOCK_SEQPACKET`, for comparing with ``type(of:)``.
    public static let sequencedPacketType = CInt(SOCK_SEQPACKET.rawValue)
}

import Foundation

/// A plain blocking Unix socket connection, for sending bytes no Varlink
/// client would send.
final class RawConnection {
    let descriptor: CInt
    /// Bytes read past the last whole frame ``readFrames(_:timeout:)`` returned.
    private var unread: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String) throws {
        do {
            descriptor = try unixSocket(at: path, connect)
        } catch {
            throw Failure(description: "connect: \(error)")
        }
    }

    deinit { close(descriptor) }

    /// Sends all of `bytes`, or as much as the server takes before it hangs up.
    /// - Returns: whether everything was sent.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                Foundation.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, CInt(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    /// Reads until the server closes the connection or `timeout` passes.
    /// - Returns: the bytes read, and whether the server closed the connection.
    func readUntilClosed(timeout: Duration = .seconds(5)) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (received, true) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return (received, true)  // ECONNRESET: closed with our bytes unread
            }
            received += buffer[..<count]
        }
        return (received, false)
    }
}

extension RawConnection {
    /// Reads until `count` NUL-terminated frames have come, the server closes
    /// the connection, or `timeout` passes.
    /// - Returns: the frames, without their NULs, as text.
    func readFrames(_ count: Int, timeout: Duration = .seconds(30)) -> [String] {
        var frames: [String] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var start = unread.startIndex
            while frames.count < count, let end = unread[start...].firstIndex(of: 0) {
                frames.append(String(decoding: unread[start..<end], as: UTF8.self))
                start = end + 1
            }
            unread.removeSubrange(..<start)
            guard frames.count < count, ContinuousClock.now < deadline else { break }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received == 0 { break }
            if received < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                break
            }
            unread += buffer[..<received]
        }
        return frames
    }
}

/// A new Unix stream socket on which `operation` (`bind` or `connect`) was
/// called with `path`'s address; closed again when that fails.
func unixSocket(at path: String, _ operation: (CInt, UnsafePointer<sockaddr>, socklen_t) -> CInt) throws -> CInt {
    let descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            operation(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        let code = errno
        close(descriptor)
        throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
    return descriptor
}

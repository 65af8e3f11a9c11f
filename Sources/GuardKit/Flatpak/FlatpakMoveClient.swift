#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The Guard's side of the Flatpak move service: a move runs outside the
/// Guard's own sandbox (it needs all of `/proc`, the network for a remote
/// over https, and `CAP_DAC_OVERRIDE` for the child's folders), in
/// `familycontrols-flatpak@.service`, reached through its socket, which only
/// root may connect to. ARCHITECTURE.md, "Flatpak apps: the lock's design".
package struct FlatpakMoveClient: Sendable {
    /// Not under `/run/familycontrols`, which sandboxed apps see (`--filesystem=/run/familycontrols:ro`).
    package static let defaultSocket = "/run/familycontrols-flatpak/move.socket"

    package var socketPath: String
    /// How long a move may take, a pull over the network included.
    package var timeout: Duration

    package init(socketPath: String = defaultSocket, timeout: Duration = .seconds(1800)) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    /// Asks the service to move the app; blocks until it answers.
    /// - Returns: the approval, now of the Guard's installation.
    /// - Throws: ``FlatpakMoveError/service(_:)`` when the service cannot be
    ///   reached, is not root's, times out or refuses (with its reason).
    package func move(_ request: FlatpakMoveRequest) throws(FlatpakMoveError) -> FlatpakApproval {
        let deadline = MonotonicInstant.now + timeout
        let socket: FileDescriptor
        do {
            let address = try UnixSocketAddress(path: socketPath)
            socket = try Socket.makeUnixStream(nonBlocking: false)
            try address.withSocketAddress { pointer, length throws(Errno) in
                _ = try retryingOnInterrupt("connect") { Glibc.connect(socket.rawValue, pointer, length) }
            }
            // The socket is systemd's (PID 1) or the service's: root either way, never a user's stand-in.
            guard try Socket.peerCredentials(of: socket.rawValue).uid == 0 else {
                throw FlatpakMoveError.service("\(socketPath) is not root's")
            }
            try socket.writeAll(FlatpakMoveWire.request(request))
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .service("\(socketPath): \(error)")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.last != 10 {
            do {
                guard try Poll.wait(for: Int16(POLLIN), on: socket.rawValue, until: deadline) != nil else {
                    throw FlatpakMoveError.service("no answer within \(timeout)")
                }
                let count = try buffer.withUnsafeMutableBytes { bytes throws(Errno) in try socket.read(into: bytes) }
                guard count > 0 else { throw FlatpakMoveError.service("the service closed the connection without an answer") }
                reply += buffer[0..<count]
                guard reply.count <= FlatpakMoveWire.lineLimit else { throw FlatpakMoveError.service("an answer over \(FlatpakMoveWire.lineLimit) bytes") }
            } catch let error as FlatpakMoveError {
                throw error
            } catch {
                throw .service("\(socketPath): \(error)")
            }
        }
        return try FlatpakMoveWire.parseReply(reply, for: request)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity

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

    /// How long a helper that answered may take to exit before it is killed.
    package var exitGrace: Duration

    package init(socketPath: String = defaultSocket, timeout: Duration = .seconds(1800), exitGrace: Duration = .seconds(2)) {
        self.socketPath = socketPath
        self.timeout = timeout
        self.exitGrace = exitGrace
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
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .service("\(socketPath): \(error)")
        }
        return try Self.converse(request, on: socket, until: deadline, timeout: timeout, peer: socketPath)
    }

    /// Moves the app in a helper process of the Guard's own binary
    /// (`familycontrolsd --flatpak-move-connection`, as the service runs it),
    /// where no move service listens (no systemd: a container, the
    /// foreground mode). The helper speaks the service's wire on a socket
    /// pair as its standard input and output; it is killed at the deadline,
    /// and reaped either way.
    /// - Parameter arguments: the helper's options (`--state-dir`,
    ///   `--installation-path`, `--flatpak-config-dir`).
    /// - Returns: the approval, now of the Guard's installation.
    /// - Throws: ``FlatpakMoveError/service(_:)`` when the helper cannot
    ///   start, times out, or refuses (with its reason).
    package func moveInHelper(_ request: FlatpakMoveRequest, executable: String = "/proc/self/exe",
                              arguments: [String]) throws(FlatpakMoveError) -> FlatpakApproval {
        let deadline = MonotonicInstant.now + timeout
        let (helper, socket) = try Self.startHelper(executable, [FlatpakMoveCommand.connectionArgument] + arguments,
                                                   named: "the move helper")
        defer { helper.kill() }
        let approval = try Self.converse(request, on: socket, until: deadline, timeout: timeout,
                                         peer: "the move helper (pid \(helper.pid))")
        // It has answered: a moment to exit, then the kill.
        _ = try? helper.waitForExit(until: .now.advanced(by: exitGrace))
        return approval
    }

    /// Starts the Guard's own binary as a helper with `arguments`, its
    /// standard input and output one end of a socket pair.
    /// - Returns: the helper and the other end.
    /// - Throws: ``FlatpakMoveError/service(_:)`` naming `name` when it cannot start.
    private static func startHelper(_ executable: String, _ arguments: [String],
                                    named name: String) throws(FlatpakMoveError) -> (HelperProcess, FileDescriptor) {
        let pair: (mine: FileDescriptor, theirs: FileDescriptor)
        do throws(Errno) { pair = try Socket.makeStreamPair() } catch {
            throw .service("\(name) could not start: \(error)")
        }
        defer { pair.theirs.close() }
        do throws(Errno) {
            let helper = try HelperProcess.spawn(executable, arguments: arguments, input: pair.theirs.rawValue,
                                                 output: pair.theirs.rawValue)
            return (helper, pair.mine)
        } catch {
            pair.mine.close()
            throw .service("\(name) could not start: \(error)")
        }
    }

    /// Finishes or undoes every move a killed helper left, in a helper of
    /// the Guard's own binary (`familycontrolsd --flatpak-recover`), as the
    /// service's unit does before each move; killed at the deadline.
    /// - Returns: what it did, one line each.
    /// - Throws: ``FlatpakMoveError/service(_:)`` when the helper cannot
    ///   start, times out, or fails.
    package func recoverInHelper(executable: String = "/proc/self/exe",
                                 arguments: [String]) throws(FlatpakMoveError) -> [String] {
        let deadline = MonotonicInstant.now + timeout
        let (helper, socket) = try Self.startHelper(executable, [FlatpakMoveCommand.recoverArgument] + arguments,
                                                   named: "the recovery helper")
        defer { helper.kill() }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            do {
                guard try Poll.wait(for: Int16(POLLIN), on: socket.rawValue, until: deadline) != nil else {
                    throw FlatpakMoveError.service("the recovery helper did not finish within \(timeout)")
                }
                let count = try buffer.withUnsafeMutableBytes { bytes throws(Errno) in try socket.read(into: bytes) }
                guard count > 0 else { break }
                // What it did is kept up to the wire's bound; the rest is read and dropped.
                if output.count < FlatpakMoveWire.messageLimit { output += buffer[0..<count] }
            } catch let error as FlatpakMoveError {
                throw error
            } catch {
                throw .service("the recovery helper (pid \(helper.pid)): \(error)")
            }
        }
        let exit: HelperProcess.Exit?
        do {
            exit = try helper.waitForExit(until: deadline)
        } catch {
            throw .service("the recovery helper (pid \(helper.pid)): \(error)")
        }
        guard exit == .exited(0) else {
            throw .service("the recovery helper (pid \(helper.pid)) \(exit.map(\.description) ?? "did not end")")
        }
        return output.split(separator: 10).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Sends `request` on `socket` and reads the one reply, until `deadline`.
    private static func converse(_ request: FlatpakMoveRequest, on socket: FileDescriptor, until deadline: MonotonicInstant,
                                 timeout: Duration, peer: String) throws(FlatpakMoveError) -> FlatpakApproval {
        do {
            try socket.writeAll(FlatpakMoveWire.request(request))
        } catch {
            throw .service("\(peer): \(error)")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.last != 0 {
            do {
                guard try Poll.wait(for: Int16(POLLIN), on: socket.rawValue, until: deadline) != nil else {
                    throw FlatpakMoveError.service("no answer within \(timeout)")
                }
                let count = try buffer.withUnsafeMutableBytes { bytes throws(Errno) in try socket.read(into: bytes) }
                guard count > 0 else { throw FlatpakMoveError.service("the service closed the connection without an answer") }
                reply += buffer[0..<count]
                guard reply.count <= FlatpakMoveWire.messageLimit else { throw FlatpakMoveError.service("an answer over \(FlatpakMoveWire.messageLimit) bytes") }
            } catch let error as FlatpakMoveError {
                throw error
            } catch {
                throw .service("\(peer): \(error)")
            }
        }
        return try FlatpakMoveWire.parseReply(reply, for: request)
    }
}

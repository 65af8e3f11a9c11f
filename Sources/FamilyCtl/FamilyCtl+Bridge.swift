import SystemKit
import VarlinkClientKit

extension FamilyCtl {
    /// `familyctl --stdio-bridge [--socket PATH]`: what `familyctl -H` runs
    /// on the other machine through ssh. It connects to the Guard's socket
    /// here, refuses a service there that does not run as root (as every
    /// local `familyctl` does), then relays bytes between standard input and
    /// output and the socket, reading nothing of them and logging nothing.
    /// The Guard sees this process, run by the SSH login's user, as its peer:
    /// it authenticates that user, the prompts going back through ssh.
    static func stdioBridge(socket: String?) throws(CommandFailure) {
        let path = GuardConnection.socketPath(socket)
        let connection: FileDescriptor
        do throws(VarlinkClientError) {
            connection = try VarlinkClient.connect(to: path, timeout: .seconds(2))
        } catch {
            throw CommandFailure(.unavailable, "cannot reach the Guard: \(error) (is familycontrolsd running?)")
        }
        try GuardConnection.requireGuard(try? Socket.peerCredentials(of: connection.rawValue), at: path)
        do throws(Errno) {
            try StreamRelay.run(socket: connection.rawValue, input: 0, output: 1)
        } catch {
            throw CommandFailure(.unavailable, "the relay to the Guard failed: \(error)")
        }
    }
}

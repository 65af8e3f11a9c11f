#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import SystemKit
import GuardIdentity

/// `familycontrolsd --flatpak-move-connection` and `--flatpak-recover`: the
/// Guard's own binary started as a short-lived root helper for one Flatpak
/// move (the move service runs one per connection; where no service
/// listens, the Guard runs it itself, after a recovery), so a move that
/// hangs in a pull can be killed without the Guard, and a kill in the middle
/// of a move is what ``FlatpakMover/recover()`` is for. The identity side
/// calls the same types in-process (``FlatpakMover``, ``FlatpakUpdateJudge``).
package enum FlatpakMoveCommand {
    package static let recoverArgument = "--flatpak-recover"
    /// The service's side of one connection (`familycontrols-flatpak@.service`,
    /// the connection as standard input and output).
    package static let connectionArgument = "--flatpak-move-connection"
    package static let modes = [recoverArgument, connectionArgument]

    package static func main(mode: String, _ tokens: [String]) -> Int32 {
        let arguments: Arguments
        do throws(UsageError) {
            arguments = try Arguments(tokens, .init(valued: ["--state-dir", "--installation-path", "--flatpak-config-dir"]))
        } catch {
            writeToStandardError("familycontrolsd \(mode): \(error)\n")
            return 1
        }
        let installation = GuardFlatpakInstallation(path: arguments["--installation-path"] ?? GuardFlatpakInstallation.defaultPath,
                                                    configurationDirectory: arguments["--flatpak-config-dir"])
        let mover = FlatpakMover(installation: installation,
                                 journalDirectory: (arguments["--state-dir"] ?? GuardStateDirectory.standard) + "/flatpak-moves")
        if mode == recoverArgument {
            for line in mover.recover() { print(line) }
            return 0
        }
        return serveConnection(mover)
    }

    /// Reads one call from standard input, moves, answers on standard output.
    private static func serveConnection(_ mover: FlatpakMover) -> Int32 {
        let input = FileDescriptor(taking: 0)
        let output = FileDescriptor(taking: 1)
        var message: [UInt8] = []
        var byte: [UInt8] = [0]
        // Byte by byte: nothing past the call is consumed, and the call is short.
        while message.last != 0, message.count <= FlatpakMoveWire.messageLimit {
            guard let count = try? byte.withUnsafeMutableBytes({ bytes throws(Errno) in try input.read(into: bytes) }),
                  count == 1 else { break }
            message.append(byte[0])
        }
        let result: Result<FlatpakApproval, FlatpakMoveError>
        do throws(FlatpakMoveError) {
            result = .success(try mover.move(try FlatpakMoveWire.parseRequest(message)))
        } catch {
            writeToStandardError("familycontrolsd \(connectionArgument): \(error)\n")
            result = .failure(error)
        }
        do {
            try output.writeAll(FlatpakMoveWire.reply(result))
        } catch {
            return 1
        }
        if case .failure = result { return 1 }
        return 0
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import VarlinkClientKit

/// The ssh(1) process that carries one connection to the Guard of another
/// machine: one end of a socket pair is ssh's standard input and output,
/// the other is this process's Varlink client. ssh's standard error is kept
/// in another pair, so that when the connection ends its last line explains why,
/// in one message naming the machine.
///
/// Not thread-safe: one owner, the connection.
final class SSHTunnel {
    let host: RemoteHost
    /// The client at this end, closed before ssh is waited for.
    let client: VarlinkClient
    private let process: HelperProcess
    private let errors: FileDescriptor

    /// The most of ssh's standard error kept for a message.
    static let errorLimit = 16 * 1024

    private init(host: RemoteHost, client: VarlinkClient, process: HelperProcess, errors: FileDescriptor) {
        self.host = host
        self.client = client
        self.process = process
        self.errors = errors
    }

    /// Starts ssh to `host`, with the client at this end.
    /// - Throws: `hostUnreachable` when ssh cannot be started at all.
    static func open(_ host: RemoteHost) throws(CommandFailure) -> SSHTunnel {
        do throws(Errno) {
            let (local, remote) = try Socket.makeStreamPair()
            let (errorsRead, errorsWrite) = try Socket.makeStreamPair()
            let process = try HelperProcess.spawn(RemoteHost.program, arguments: host.sshArguments,
                                                  input: remote.rawValue, output: remote.rawValue,
                                                  error: errorsWrite.rawValue)
            remote.close()
            errorsWrite.close()
            // Read only when the connection has ended; never wait on it.
            try Socket.setNonBlocking(errorsRead.rawValue, true)
            let client = VarlinkClient(connectedSocket: local, label: host.name,
                                       replyTimeout: .seconds(120))
            return SSHTunnel(host: host, client: client, process: process, errors: errorsRead)
        } catch {
            throw CommandFailure(.hostUnreachable, "cannot run \(DisplayText.sanitized(RemoteHost.program)) to reach "
                + "\(host.shown): \(error)")
        }
    }

    /// What `error`, which ended the connection, means: after a hang-up,
    /// how ssh ended says whether the machine was out of reach (ssh's 255),
    /// had no `familyctl` (the shell's 127), or its Guard could not be
    /// reached (the bridge's own status).
    func failure(after error: VarlinkClientError) -> CommandFailure {
        let exit: HelperProcess.Exit?
        switch error {
        case .connectionClosed, .interrupted:
            exit = try? process.waitForExit(until: .now + .seconds(10))
        default:
            exit = nil
        }
        if exit == nil { process.kill() }
        let said = lastErrorLine().map { ": " + $0 } ?? ""
        switch exit {
        case .exited(255):
            return CommandFailure(.hostUnreachable, "cannot reach \(host.shown) over SSH\(said)")
        case .exited(127):
            return CommandFailure(.notInstalledOnHost, "\(host.shown) has no familyctl to reach its Guard through "
                + "(is FamilyControls installed there?)\(said)")
        case .exited(ExitCode.unavailable.rawValue):
            return CommandFailure(.unavailable, "the Guard on \(host.shown) could not be reached\(said)")
        case .exited(let status):
            return CommandFailure(.unavailable, "the connection to the Guard on \(host.shown) ended "
                + "(ssh exited with status \(status))\(said)")
        case .killed:
            return CommandFailure(.unavailable, "the connection to the Guard on \(host.shown) ended: ssh \(exit.map { "\($0)" } ?? "")\(said)")
        case nil:
            return CommandFailure(.unavailable, "the Guard on \(host.shown) did not answer: \(error)")
        }
    }

    /// The last line ssh (or the bridge through it) wrote to standard error,
    /// without the program's name in front, safe on a terminal.
    private func lastErrorLine() -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < Self.errorLimit {
            let count = chunk.withUnsafeMutableBytes { buffer in (try? errors.read(into: buffer)) ?? 0 }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        guard var line = lines.last(where: { !$0.allSatisfy { $0 == " " || $0 == "\r" } }) else { return nil }
        for prefix in ["familyctl: ", "ssh: "] where line.hasPrefix(prefix) {
            line.removeFirst(prefix.count)
        }
        return DisplayText.sanitized(line.filter { $0 != "\r" })
    }

    deinit {
        // ssh sees the end of its input, passes it on, and ends.
        client.close()
        if (try? process.waitForExit(until: .now + .seconds(2))) == nil { process.kill() }
    }
}

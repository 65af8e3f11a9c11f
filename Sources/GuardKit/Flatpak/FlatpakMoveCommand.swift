#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import SystemKit

/// `familycontrolsd --flatpak-move`, `--flatpak-recover` and
/// `--flatpak-judge`: the Guard's own binary started as a short-lived root
/// helper for one Flatpak step (as for PAM), so a step that hangs in a pull
/// can be killed without the Guard, and a kill in the middle of a move is
/// what ``FlatpakMover/recover()`` is for. The identity side calls the same
/// types in-process (``FlatpakMover``, ``FlatpakUpdateJudge``).
///
/// A move takes the deployment folder the Guard opened as descriptor 3 and
/// prints the approval as `key=value` lines; a judgement prints one line:
/// `unchanged`, `approved COMMIT TIMESTAMP`, `not-installed`, or
/// `needs-guardian from OLD to NEW: REASON`.
package enum FlatpakMoveCommand {
    package static let recoverArgument = "--flatpak-recover"
    package static let judgeArgument = "--flatpak-judge"
    /// The service's side of one connection (`familycontrols-flatpak@.service`,
    /// the connection as standard input and output).
    package static let connectionArgument = "--flatpak-move-connection"
    package static let modes = [FlatpakMover.modeArgument, recoverArgument, judgeArgument, connectionArgument]

    package static func main(mode: String, _ tokens: [String]) -> Int32 {
        func fail(_ message: String) -> Int32 {
            writeToStandardError("familycontrolsd \(mode): \(message)\n")
            return 1
        }
        let arguments: Arguments
        do throws(UsageError) {
            arguments = try Arguments(tokens, .init(valued: ["--uid", "--home", "--app", "--arch", "--branch", "--commit",
                                                             "--remote", "--url", "--timestamp", "--state-dir", "--runtime", "--runtime-commit", "--runtime-timestamp",
                                                             "--installation-path", "--flatpak-config-dir", "--service",
                                                             "--trusted-remote"]))
        } catch {
            return fail("\(error)")
        }
        // One remote the site trusts, as a TrustedRemote= line reads; none without it.
        var trusted: [FlatpakTrustedRemote] = []
        if let line = arguments["--trusted-remote"] {
            switch FlatpakTrustedRemote.parse(line) {
            case .success(let remote): trusted = [remote]
            case .failure(let error): return fail("--trusted-remote: \(error)")
            }
        }
        let installation = GuardFlatpakInstallation(path: arguments["--installation-path"] ?? GuardFlatpakInstallation.defaultPath,
                                                    configurationDirectory: arguments["--flatpak-config-dir"])
        let mover = FlatpakMover(installation: installation,
                                 journalDirectory: (arguments["--state-dir"] ?? GuardDaemon.defaultStateDirectory) + "/flatpak-moves")
        switch mode {
        case recoverArgument:
            for line in mover.recover() { print(line) }
            return 0
        case connectionArgument:
            return serveConnection(mover)
        case judgeArgument:
            guard let app = arguments["--app"], let arch = arguments["--arch"], let branch = arguments["--branch"],
                  let remote = arguments["--remote"], let url = arguments["--url"], let commit = arguments["--commit"],
                  let timestamp = arguments["--timestamp"].flatMap(UInt64.init) else {
                return fail("--app, --arch, --branch, --remote, --url, --commit and --timestamp are needed")
            }
            var approval = FlatpakApproval(appID: app, arch: arch, branch: branch, remote: remote, url: url,
                                           commit: commit, timestamp: timestamp)
            if let runtime = arguments["--runtime"], let runtimeCommit = arguments["--runtime-commit"],
               let runtimeTime = arguments["--runtime-timestamp"].flatMap(UInt64.init) {
                approval.runtime = FlatpakRuntimePin(name: runtime, commit: runtimeCommit, timestamp: runtimeTime)
            }
            switch FlatpakUpdateJudge(installation: installation, trusted: trusted).judge(approval) {
            case .unchanged: print("unchanged")
            case .notInstalled: print("not-installed")
            case .approved(let moved):
                print("approved \(moved.commit) \(moved.timestamp)" + (moved.runtime.map { " runtime \($0.commit) \($0.timestamp)" } ?? ""))
            case .needsGuardian(let from, let to, let reason): print("needs-guardian from \(from) to \(to): \(reason)")
            }
            return 0
        default:
            guard let uid = arguments["--uid"].flatMap(UInt32.init), let home = arguments["--home"],
                  let app = arguments["--app"], let arch = arguments["--arch"], let branch = arguments["--branch"],
                  let commit = arguments["--commit"] else {
                return fail("--uid, --home, --app, --arch, --branch and --commit are needed, and the deployment as descriptor 3")
            }
            let deployment = FileDescriptor(taking: 3)
            guard let status = try? deployment.status(), status.type == .directory else {
                return fail("descriptor 3 is not the deployment's folder")
            }
            let request = FlatpakMoveRequest(uid: uid, home: home, appID: app, arch: arch, branch: branch, commit: commit,
                                             deployment: status, trusted: trusted)
            do throws(FlatpakMoveError) {
                // With --service, through the move service, as the Guard asks it; else here.
                let approval: FlatpakApproval
                if let service = arguments["--service"] {
                    approval = try FlatpakMoveClient(socketPath: service).move(request)
                } else {
                    approval = try mover.move(request)
                }
                print("remote=\(approval.remote)\nurl=\(approval.url)\ncommit=\(approval.commit)\ntimestamp=\(approval.timestamp)")
                if let runtime = approval.runtime { print("runtime=\(runtime.name)\nruntime-commit=\(runtime.commit)") }
                return 0
            } catch {
                return fail("\(error)")
            }
        }
    }

    /// Reads one request line from standard input, moves, answers on standard output.
    private static func serveConnection(_ mover: FlatpakMover) -> Int32 {
        let input = FileDescriptor(taking: 0)
        let output = FileDescriptor(taking: 1)
        var line: [UInt8] = []
        var byte: [UInt8] = [0]
        // Byte by byte: nothing past the line is consumed, and the line is short.
        while line.last != 10, line.count <= FlatpakMoveWire.lineLimit {
            guard let count = try? byte.withUnsafeMutableBytes({ bytes throws(Errno) in try input.read(into: bytes) }),
                  count == 1 else { break }
            line.append(byte[0])
        }
        let result: Result<FlatpakApproval, FlatpakMoveError>
        do throws(FlatpakMoveError) {
            result = .success(try mover.move(try FlatpakMoveWire.parseRequest(line)))
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

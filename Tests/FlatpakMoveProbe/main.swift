#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import SystemKit
@testable import GuardFlatpak
@testable import GuardIdentity

// One Flatpak step of GuardKit's, run as root for FlatpakMoveTests with
// real flatpak: what the Guard does in-process, as a command line.
//
//   flatpak-move-probe move --uid UID --home HOME --app ID --arch A --branch B --commit C [--service SOCKET]
//       moves the deployment opened as descriptor 3 (FlatpakMover, or the
//       move service at SOCKET through FlatpakMoveClient) and prints the
//       approval as key=value lines
//   flatpak-move-probe judge --app ID --arch A --branch B --remote R --url U --commit C --timestamp T
//                      [--runtime NAME --runtime-commit C --runtime-timestamp T]
//       judges the Guard's installation against that approval
//       (FlatpakUpdateJudge) and prints one line: unchanged,
//       approved COMMIT TIMESTAMP [runtime COMMIT TIMESTAMP], not-installed,
//       or needs-guardian from OLD to NEW: REASON
//
// Both take --state-dir, --installation-path, --flatpak-config-dir and
// --trusted-remote "NAME URL [FINGERPRINT...]".

func fail(_ message: String) -> Never {
    writeToStandardError("flatpak-move-probe: \(message)\n")
    exit(1)
}

let tokens = Array(CommandLine.arguments.dropFirst())
guard let mode = tokens.first, ["move", "judge"].contains(mode) else { fail("usage: flatpak-move-probe move|judge OPTIONS") }
let arguments: Arguments
do throws(UsageError) {
    arguments = try Arguments(Array(tokens.dropFirst()), .init(valued: [
        "--uid", "--home", "--app", "--arch", "--branch", "--commit", "--remote", "--url", "--timestamp", "--state-dir",
        "--runtime", "--runtime-commit", "--runtime-timestamp", "--installation-path", "--flatpak-config-dir", "--service",
        "--trusted-remote",
    ]))
} catch {
    fail("\(error)")
}
var trusted: [FlatpakTrustedRemote] = []
if let line = arguments["--trusted-remote"] {
    switch FlatpakTrustedRemote.parse(line) {
    case .success(let remote): trusted = [remote]
    case .failure(let error): fail("--trusted-remote: \(error)")
    }
}
let installation = GuardFlatpakInstallation(path: arguments["--installation-path"] ?? GuardFlatpakInstallation.defaultPath,
                                            configurationDirectory: arguments["--flatpak-config-dir"])
let mover = FlatpakMover(installation: installation,
                         journalDirectory: (arguments["--state-dir"] ?? GuardStateDirectory.standard) + "/flatpak-moves")

if mode == "judge" {
    guard let app = arguments["--app"], let arch = arguments["--arch"], let branch = arguments["--branch"],
          let remote = arguments["--remote"], let url = arguments["--url"], let commit = arguments["--commit"],
          let timestamp = arguments["--timestamp"].flatMap(UInt64.init) else {
        fail("--app, --arch, --branch, --remote, --url, --commit and --timestamp are needed")
    }
    var approval = FlatpakApproval(appID: app, arch: arch, branch: branch, remote: remote, url: url, commit: commit,
                                   timestamp: timestamp)
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
    exit(0)
}

guard let uid = arguments["--uid"].flatMap(UInt32.init), let home = arguments["--home"], let app = arguments["--app"],
      let arch = arguments["--arch"], let branch = arguments["--branch"], let commit = arguments["--commit"] else {
    fail("--uid, --home, --app, --arch, --branch and --commit are needed, and the deployment as descriptor 3")
}
let deployment = FileDescriptor(taking: 3)
guard let status = try? deployment.status(), status.type == .directory else { fail("descriptor 3 is not the deployment's folder") }
let request = FlatpakMoveRequest(uid: uid, home: home, appID: app, arch: arch, branch: branch, commit: commit,
                                 deployment: status, trusted: trusted)
do throws(FlatpakMoveError) {
    // With --service, through the move service, as the Guard asks it; else here.
    let approval = if let service = arguments["--service"] {
        try FlatpakMoveClient(socketPath: service).move(request)
    } else {
        try mover.move(request)
    }
    print("remote=\(approval.remote)\nurl=\(approval.url)\ncommit=\(approval.commit)\ntimestamp=\(approval.timestamp)")
    if let runtime = approval.runtime { print("runtime=\(runtime.name)\nruntime-commit=\(runtime.commit)") }
} catch {
    fail("\(error)")
}

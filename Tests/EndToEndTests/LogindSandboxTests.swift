import Foundation
import TestSupport
import Testing

/// sd-login inside the Guard's sandbox: the unit's capabilities, read-only
/// trees, /proc options and system call filter (inotify for the monitor,
/// the reads of /run/systemd) leave logind's sessions readable. Run as
/// `logind-probe` in a mount namespace whose /run/systemd is a folder
/// holding one session file in logind's format (systemd as PID 1 does not
/// run here, so no live logind writes one).
@Suite(.enabled(if: getuid() == 0 && productExists("logind-probe") && FileManager.default.fileExists(atPath: "/run/systemd")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") && canAnalyzeUnits,
                "needs root, unshare(1), /run/systemd, systemd-analyze and `swift build`'s logind-probe"))
struct LogindSandboxTests {
    @Test func theGuardsUnitSandboxLetsSdLoginOpenItsMonitorAndListSessions() async throws {
        try await withThrowawayUser(prefix: "ls") { child in
            try await withTemporaryDirectory { root in
                for folder in ["system", "seats", "sessions", "users"] {
                    try FileManager.default.createDirectory(atPath: "\(root)/\(folder)", withIntermediateDirectories: true)
                }
                let session = ["# This is private data. Do not parse.", "UID=\(child.uid)", "USER=\(child.name)", "ACTIVE=1",
                               "IS_DISPLAY=1", "STATE=active", "REMOTE=0", "LEADER_FD_SAVED=no", "TYPE=tty", "CLASS=user",
                               "SCOPE=session-9.scope", "TTY=tty3", "SERVICE=login", "LEADER=4949", "REALTIME=1700000000000000"]
                try Data((session.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: "\(root)/sessions/9"))
                let sandboxed = try GuardSandbox.unit().wrap([productPath("logind-probe"), "list"])
                let probed = try await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c",
                                                                #"mount --bind "$0" /run/systemd && exec "$@""#, root] + sandboxed)
                #expect(probed.status == 0, "\(probed.standardOutput)\(probed.standardError)")
                let lines = probed.standardOutput.split(separator: "\n")
                #expect(lines.first?.hasPrefix("running true") == true, "\(probed.standardOutput)")
                let fields = lines.dropFirst().first?.split(separator: "\t").map(String.init) ?? []
                #expect(Array(fields.prefix(5)) == ["9", child.name, String(child.uid), "login", "tty3"],
                        "\(probed.standardOutput)\(probed.standardError)")
            }
        }
    }
}

import Foundation
import Testing
import TestSupport
import Varlink

/// A Flatpak app's monitor: declared in the deployment's desktop entry and
/// run by the real Guard with `flatpak run --command=/app/PROGRAM` as the
/// child, in the app's real sandbox.
@Suite(.serialized, .enabled(if: canRunFlatpak, "needs root, useradd, and Debian's flatpak and dbus (.ci/run installs them)"))
struct FlatpakMonitorTests {
    /// The app as its next version declares a monitor (the app's own
    /// program), approved, and a session of the child's opened as the PAM
    /// session module opens one (its leader is this process).
    /// - Returns: the running monitor's pid, once it printed its version, and the session's token.
    private func monitorRunning(_ guardd: GuardFixture, _ child: FlatpakChild) async throws -> (pid: Int64, token: String) {
        _ = try await offload { try child.repository.publish(version: 2, monitor: "bin/\(FlatpakTestRepository.command)") }
        try await child.update().requireSuccess()
        #expect(try await guardd.flatpakRequestApproved(child).status == 0, "\(guardd.log)")
        let token = String((0..<32).map { _ in "0123456789abcdef".randomElement()! })
        _ = try await guardd.call("OpenSession", ["token": .string(token), "user": .string(child.user.name),
                                                  "service": .string("login"),
                                                  "runtimeDirectory": .string("\(child.directory)/run")])
        let printed = "monitor \(FlatpakChild.appID) for \(child.user.name): \(FlatpakChild.appID) version 2"
        #expect(await eventually(timeout: .seconds(10)) { guardd.log.contains(printed) },
                "the monitor ran in the sandbox: \(guardd.log.suffix(3000))")
        // The listing read just before the monitor's line may be of a moment it was not yet released.
        var monitors: [JSONObject] = []
        for _ in 0..<50 {
            monitors = try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
            if monitors.first?["state"]?.stringValue == "running" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return (try #require(monitors.first?["pid"]?.intValue, "\(monitors)"), token)
    }

    private func monitors(_ guardd: GuardFixture) async throws -> [JSONObject] {
        try await guardd.call("ListMonitors")["monitors"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    @Test func anApprovedFlatpakAppsMonitorRunsInItsSandboxAndComesBackAfterAKill() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let (pid, token) = try await monitorRunning(guardd, child)
            // flatpak run became bubblewrap, which runs the app's program as /app/bin/PROGRAM.
            let sandboxed = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0")
            #expect(sandboxed.first?.hasSuffix("bwrap") == true, "\(sandboxed)")
            #expect(sandboxed.contains("/app/bin/\(FlatpakTestRepository.command)"), "\(sandboxed)")
            #expect(await eventually(timeout: .seconds(10)) { guardd.log.contains("runs in a sandbox of the approved deployment") },
                    "\(guardd.log.suffix(2000))")

            let kill = try await child.shell("kill -9 \(pid)")
            #expect(kill.status == 0, "\(kill.standardError)")
            var back: Int64?
            for _ in 0..<100 {
                let now = try await monitors(guardd)
                if let next = now.first?["pid"]?.intValue, next != pid, now.first?["state"]?.stringValue == "running" {
                    back = next
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(back != nil, "started again: \(guardd.log.suffix(2000))")
            _ = try await guardd.call("CloseSession", ["token": .string(token)])
        }
    }

    /// A copy of the child's installation whose deployment's monitor program
    /// is the child's: prints a line and stays running.
    private func makeDecoy(_ child: FlatpakChild, at decoy: String) async throws {
        let commit = try #require(child.activeCommit())
        let program = "\(decoy)/app/\(FlatpakChild.appID)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)/"
            + "\(commit)/files/bin/\(FlatpakTestRepository.command)"
        try await child.shell("""
            set -e
            cp -a '\(child.installation)' '\(decoy)'
            rm -f '\(program)'
            printf '#!/bin/sh\\necho decoy monitor running\\nexec sleep 100000\\n' > '\(program)'
            chmod 755 '\(program)'
            """).requireSuccess()
    }

    /// The child renames the installation above the locked app, puts a copy
    /// with a monitor of its own at the old path, and kills the monitor: the
    /// folder at the path `flatpak run` reads is not the approved one, so
    /// nothing is started there.
    @Test func aDecoyPlantedAtTheApprovedPathIsNeverStartedAsTheMonitor() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let (pid, token) = try await monitorRunning(guardd, child)
            try await makeDecoy(child, at: child.installation + "-decoy")
            try await child.shell("""
                set -e
                mv '\(child.installation)' '\(child.installation)-moved'
                mv '\(child.installation)-decoy' '\(child.installation)'
                kill -9 \(pid)
                """).requireSuccess()
            #expect(await eventually(timeout: .seconds(10)) { guardd.log.contains("where flatpak run looks for it, is not the approved one") },
                    "\(guardd.log.suffix(3000))")
            // Past a few restarts and the Guard's next reading of the approvals.
            try await Task.sleep(for: .seconds(12))
            #expect(!guardd.log.contains("decoy monitor running"), "\(guardd.log.suffix(3000))")
            #expect(try await monitors(guardd).first?["state"]?.stringValue != "running", "\(guardd.log.suffix(2000))")
            let rows = try await guardd.auditRows()
            #expect(rows.contains("guard monitor \(child.user.name) \(FlatpakChild.appID) failed"), "\(rows)")
            _ = try await guardd.call("CloseSession", ["token": .string(token)])
        }
    }

    /// The child waits for the Guard to look at the approved folder before a
    /// restart (inotify's `IN_OPEN`) and swaps the decoy in right after, so
    /// `flatpak run` starts the copy: its sandbox's `/app` is not the approved
    /// deployment's, so the Guard kills it and never vouches for it.
    @Test func aDecoySwappedInAsTheMonitorStartsIsKilledOnceItsSandboxShows() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let (pid, token) = try await monitorRunning(guardd, child)
            try await makeDecoy(child, at: child.installation + "-decoy")
            let swap = """
                import ctypes, os, sys
                installation, pid = sys.argv[1], int(sys.argv[2])
                libc = ctypes.CDLL(None, use_errno=True)
                fd = libc.inotify_init()
                app = (installation + "/app/" + sys.argv[3]).encode()
                if libc.inotify_add_watch(fd, app, 0x20) < 0: sys.exit("inotify_add_watch")
                os.kill(pid, 9)
                os.read(fd, 4096)
                os.rename(installation, installation + "-moved")
                os.rename(installation + "-decoy", installation)
                print("swapped", flush=True)
                """
            // At a real-time priority (set by root, kept by the child's process), so
            // the swap lands between the Guard's look and flatpak's however busy the
            // machine: on two cores running the whole suite, flatpak was sometimes
            // there first, and the approved app ran (rightly) instead of the decoy.
            let command = ["/usr/bin/chrt", "--fifo", "50"] + child.commandLine(
                ["/bin/sh", "-c", "exec python3 -c '\(swap)' '\(child.installation)' \(pid) \(FlatpakChild.appID)"])
            let swapped = try await run(command[0], Array(command.dropFirst()))
            #expect(swapped.standardOutput == "swapped\n", "\(swapped.standardError)")
            #expect(await eventually(timeout: .seconds(20)) {
                guardd.log.contains("is killed: its sandbox's /app is")
                    || guardd.log.contains("where flatpak run looks for it, is not the approved one")
            }, "\(guardd.log.suffix(3000))")
            try await Task.sleep(for: .seconds(3))
            // Whichever look saw it, the copy runs as no monitor: never listed as running, never vouched for.
            for monitor in try await monitors(guardd) where monitor["state"]?.stringValue == "running" {
                let running = monitor["pid"]?.intValue ?? 0
                let command = (try? String(contentsOfFile: "/proc/\(running)/cmdline", encoding: .utf8)) ?? ""
                Issue.record("a monitor runs as pid \(running): \(command)\n\(guardd.log.suffix(2000))")
            }
            #expect(guardd.log.contains("is killed: its sandbox's /app is"), "the swap came after the look: \(guardd.log.suffix(3000))")
            _ = try await guardd.call("CloseSession", ["token": .string(token)])
        }
    }
}

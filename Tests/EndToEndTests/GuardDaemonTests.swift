import Foundation
import Testing
import TestSupport

/// familycontrolsd as an administrator starts and stops it.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct GuardDaemonTests {
    private let daemon = productPath("familycontrolsd")

    @Test func refusesToStartWithoutRoot() async throws {
        try await withTemporaryDirectory { directory in
            let result = try await run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                            daemon, "--socket", "\(directory)/s", "--state-dir", "\(directory)/st"])
            #expect(result.status == 4)
            #expect(result.standardError.hasPrefix("familycontrolsd: must be run as root"))
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/s"))
        }
    }

    @Test func refusesAnInvalidConfiguration() async throws {
        try await withTemporaryDirectory { directory in
            try "[Family]\nChildren=alice\nParents=bob\n".write(toFile: "\(directory)/bad.conf", atomically: true, encoding: .utf8)
            let result = try await run(daemon, ["--socket", "\(directory)/s", "--state-dir", "\(directory)/st",
                                                "--config", "\(directory)/bad.conf"])
            #expect(result.status == 3)
            #expect(result.standardError == "familycontrolsd: invalid configuration: \(directory)/bad.conf:3: unknown key \"Parents\" in [Family] (expected Guardians, Children or ApprovedApps)\n")
        }
    }

    /// Under systemd, standard error is the journal (`JOURNAL_STREAM` names
    /// it): a fatal error carries `<3>`, so `journalctl -p err` shows why the
    /// Guard did not start. Elsewhere, and when the variable names another
    /// stream (a child of a service), no prefix.
    @Test(arguments: [true, false])
    func aFatalErrorCarriesTheJournalsPriorityOnlyWhenWritingToTheJournal(_ matching: Bool) async throws {
        try await withTemporaryDirectory { directory in
            try "[Family]\nParents=bob\n".write(toFile: "\(directory)/bad.conf", atomically: true, encoding: .utf8)
            let logPath = "\(directory)/stderr"
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            var status = stat()
            #expect(stat(logPath, &status) == 0)
            let stream = matching ? "\(status.st_dev):\(status.st_ino)" : "\(status.st_dev):\(status.st_ino + 1)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: daemon)
            process.arguments = ["--socket", "\(directory)/s", "--state-dir", "\(directory)/st", "--config", "\(directory)/bad.conf"]
            var environment = ProcessInfo.processInfo.environment
            environment["JOURNAL_STREAM"] = stream
            process.environment = environment
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            process.standardError = log
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            await offloadWait(process)
            try log.close()
            #expect(process.terminationStatus == 3)
            let text = try String(contentsOfFile: logPath, encoding: .utf8)
            let expected = (matching ? "<3>" : "") + "familycontrolsd: invalid configuration: \(directory)/bad.conf:2: "
            #expect(text.hasPrefix(expected), "\(text)")
        }
    }

    @Test func passwordsNeverReachACoreFile() async throws {
        try await withGuard { guardd in
            let pid = try #require(guardd.process?.processIdentifier)
            let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
            let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
            #expect(core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"],
                    "\(core ?? "no core line")")
            #expect(!guardd.log.contains("cannot turn core dumps off"), "\(guardd.log)")
        }
    }

    @Test func aSecondGuardOnTheSameSocketIsRefused() async throws {
        try await withGuard { guardd in
            let result = try await run(daemon, ["--socket", guardd.socket, "--state-dir", "\(guardd.directory)/other",
                                                "--config", guardd.configPath])
            #expect(result.status == 1)
            #expect(result.standardError == "familycontrolsd: another Guard already answers on \(guardd.socket)\n")
            #expect(guardd.process?.isRunning == true)
        }
    }

    @Test func aStaleSocketIsReplacedAndAnythingElseIsLeftAlone() async throws {
        try await withGuard { guardd in
            guardd.stop(signal: SIGKILL)  // leaves the socket file behind, with no one listening
            #expect(FileManager.default.fileExists(atPath: guardd.socket))
            try await guardd.start()
            #expect(guardd.log.contains("removing stale socket \(guardd.socket)"))

            let regular = "\(guardd.directory)/not-a-socket"
            try "keep me".write(toFile: regular, atomically: true, encoding: .utf8)
            let result = try await run(daemon, ["--socket", regular, "--state-dir", "\(guardd.directory)/other",
                                                "--config", guardd.configPath])
            #expect(result.status == 1)
            #expect(result.standardError.contains("\(regular) exists and is not a socket"))
            #expect(try String(contentsOfFile: regular, encoding: .utf8) == "keep me")
        }
    }

    @Test func sighupReloadsAndABadReloadKeepsTheOldConfiguration() async throws {
        try await withGuard { guardd in
            let pid = try #require(guardd.process?.processIdentifier)
            try "[Family]\nKids=x\n".write(toFile: guardd.configPath, atomically: true, encoding: .utf8)
            kill(pid, SIGHUP)
            try await waitUntil(timeout: 60) { guardd.log.contains("reload refused, keeping the previous configuration") }
            // The family still works as configured before.
            let approved = try await guardd.requestApproved()
            #expect(approved.status == 0, "\(approved.standardError)")

            try guardd.writeConfiguration()
            kill(pid, SIGHUP)
            try await waitUntil(timeout: 60) { guardd.log.contains("reloaded \(guardd.configPath)") }
        }
    }

    /// Quiet for a second, the Guard lets go of the pages of its own code it
    /// ran (they stay in the page cache), and the next call maps them again.
    @Test func aQuietGuardLetsGoOfTheCodeItRanAndServesOn() async throws {
        try await withGuard { guardd in
            let pid = try #require(guardd.process?.processIdentifier)
            for _ in 0..<20 { try await guardd.familyctl(["status"]).requireSuccess() }
            let busy = try Self.residentCode(of: pid)
            // Without letting go, a debug Guard keeps about 4 MB of it; quiet, about 0.6 MB.
            #expect(await eventually(timeout: .seconds(30)) { ((try? Self.residentCode(of: pid)) ?? .max) < 1_500 },
                    "\((try? Self.residentCode(of: pid)) ?? -1) kB resident, \(busy) kB right after 20 calls")
            try await guardd.familyctl(["status"]).requireSuccess()
            #expect(try Self.residentCode(of: pid) > 0)
        }
    }

    /// Kilobytes of the process's own program code resident (`Rss:` of its
    /// executable's `r-xp` mappings in smaps).
    private static func residentCode(of pid: pid_t) throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        var total = 0, inCode = false
        for line in try String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":") {
                inCode = fields.count >= 6 && fields[1] == "r-xp" && fields.last.map(String.init) == executable
            } else if inCode, fields.first == "Rss:", fields.count >= 2 {
                total += Int(fields[1]) ?? 0
            }
        }
        return total
    }

    @Test func sigtermStopsCleanly() async throws {
        try await withGuard { guardd in
            let process = try #require(guardd.process)
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(guardd.log.contains("stopping on SIGTERM"))
        }
    }

    @Test func aFilesystemThatCannotHoldTheLockIsReportedUnenforced() async throws {
        try await withGuard { guardd in
            // ramfs has no immutable attribute: the child could still move the app away.
            let applications = "\(guardd.homesRoot)/\(guardd.child.name)/Applications"
            try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
            let mounted = try await run("/usr/bin/mount", ["-t", "ramfs", "ramfs", applications])
            try #require(mounted.succeeded, "mounting ramfs needs root in the initial mount namespace: \(mounted.standardError)")
            defer { _ = try? run("/usr/bin/umount", ["-l", applications]) as ProcessResult }
            let app = try guardd.installDemo(for: guardd.child, appID: "org.example.Ram", inHome: true)
            try await guardd.requestApproved(executable: "\(app)/familycontrols-demo").requireSuccess()
            let status = try await guardd.familyctl(["status", "--json"])
            #expect(status.standardOutput.contains("\"lock\":\"unenforced\",\"lockReason\":\"filesystem ramfs does not support the immutable attribute"),
                    "\(status.standardOutput)")
            let table = try await guardd.familyctl(["status"])
            #expect(table.standardOutput.contains("unenforced: filesystem ramfs does not support the immutable attribute"),
                    "\(table.standardOutput)")
            #expect(try await guardd.storedStatus(appID: "org.example.Ram") == "approved")
            #expect(guardd.log.contains("is approved but NOT locked"))
            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", "org.example.Ram"]).requireSuccess()
        }
    }
}

/// Waits for `process` off the cooperative pool.
private func offloadWait(_ process: Process) async {
    _ = try? await offload { process.waitUntilExit() }
}

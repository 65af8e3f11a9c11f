import Foundation
import TestSupport

/// `flatpak run APPID` started as the child, and the app's own process in
/// its sandbox (bubblewrap's pid namespace), seen from the host.
final class RunningFlatpakApp: @unchecked Sendable {
    /// The `dbus-run-session -- flatpak run` process this test started.
    private let process: Process
    private let outputPath: String
    /// The host PID of the app's process inside the sandbox.
    private(set) var pid: Int32 = 0
    /// Flatpak's instance ID (`flatpak ps`).
    private(set) var instance = ""

    /// What the app printed so far.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    init(command: [String], output: String) throws {
        outputPath = output
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? handle.close() }
        process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits up to 90 s for `flatpak ps` to list the instance and for the
    /// app's process (the child of bubblewrap's pid 1) to have left bubblewrap:
    /// a sandbox starts in a second alone, but has taken over 30 s on a
    /// two-core machine running the whole suite.
    func waitUntilSandboxed(child: FlatpakChild) async throws {
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw FixtureError("flatpak run exited (\(process.terminationStatus)): \(output)") }
            let listed = try await child.flatpak(["ps", "--columns=instance,child-pid,application"])
            let row = listed.standardOutput.split(separator: "\n")
                .map { $0.split(separator: "\t").map(String.init) }
                .first { $0.count == 3 && $0[2] == FlatpakChild.appID }
            if let row, let sandbox = Int32(row[1]), let app = Self.onlyChild(of: sandbox),
               let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(app)/exe"),
               !exe.hasSuffix("/bwrap") {
                instance = row[0]
                pid = app
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw FixtureError("flatpak run did not start \(FlatpakChild.appID) within 90 s: \(output)")
    }

    /// `/proc/PID/root/.flatpak-info` of the app's process, read through its
    /// root as the Guard will: sections of keys and values.
    func flatpakInfo() throws -> [String: [String: String]] {
        let text = try String(contentsOfFile: "/proc/\(pid)/root/.flatpak-info", encoding: .utf8)
        var sections: [String: [String: String]] = [:]
        var section = ""
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
            } else if let equals = line.firstIndex(of: "=") {
                sections[section, default: [:]][String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        return sections
    }

    /// Ends the app and waits for `flatpak run` to return.
    func stop() {
        if pid > 0 { kill(pid, SIGKILL) }
        for _ in 0..<100 where process.isRunning { usleep(50_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The one process whose parent is `parent`, from `/proc/*/stat`.
    private static func onlyChild(of parent: Int32) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let children = entries.compactMap(Int32.init).filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            // After "pid (comm) state ppid ...": the comm may hold spaces and parentheses.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == parent
        }
        return children.count == 1 ? children[0] : nil
    }
}

/// The device and inode of `path` (`stat(2)`, following links), to compare
/// folders as the Guard does rather than by their path strings.
func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }
    return (UInt64(status.st_dev), UInt64(status.st_ino))
}

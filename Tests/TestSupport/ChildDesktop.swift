import Foundation

/// A desktop of a child's own: Xvfb, dunst and a session bus, all run as the
/// child by `Config/screenshot-notification.sh`, which takes a screenshot
/// once a notification is shown on that bus. The caller kills the child's
/// processes when done (`pkill -KILL -u UID`).
public struct ChildDesktop: Sendable {
    /// The session bus's address, `unix:path=…,guid=…`.
    public let address: String
    /// Where the screenshot is written.
    public let picture: String
    /// The script's run: it ends once the screenshot is taken.
    private let shot: Task<ProcessResult, any Error>

    /// What the screenshot shows, as `identify` reads it.
    public struct Screenshot: Sendable {
        /// The script's run.
        public var made: ProcessResult
        /// Width and height in pixels, and the number of colours; empty when unreadable.
        public var fields: [Int]
    }

    /// Starts the desktop in `folder`, which is made the child's, and waits
    /// up to 30 s for its bus.
    /// - Throws: ``FixtureError`` with the script's errors when the desktop did not start.
    public static func start(for child: ThrowawayUser, in folder: String) async throws -> ChildDesktop {
        try copyProgram("\(packageRoot)/Config/screenshot-notification.sh", to: "\(folder)/shot.sh")
        // What a booted system's tmpfiles make before any X server runs.
        let prepared = try await sh("chown -R \(child.name) '\(folder)' && install -d -m 1777 -o root -g root /tmp/.X11-unix")
        guard prepared.succeeded else { throw FixtureError("the child's desktop folder: \(prepared.standardError)") }
        let picture = "\(folder)/screen.png", busFile = "\(folder)/bus"
        let shot = Task {
            try await run("/usr/bin/setpriv", [
                "--reuid=\(child.uid)", "--regid=\(child.gid)", "--clear-groups", "/usr/bin/env", "-i",
                "PATH=/usr/bin:/bin", "HOME=\(folder)", "LANG=C.UTF-8", "SCREENSHOT_BUS_FILE=\(busFile)",
                "/bin/sh", "\(folder)/shot.sh", picture])
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: busFile) {
            guard ContinuousClock.now < deadline else {
                _ = try? await sh("pkill -KILL -u \(child.uid)")
                throw FixtureError("the child's desktop did not start: \(try await shot.value.standardError)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ChildDesktop(address: try String(contentsOfFile: busFile, encoding: .utf8), picture: picture, shot: shot)
    }

    /// Waits for the screenshot and reads it.
    public func screenshot() async throws -> Screenshot {
        let made = try await shot.value
        let described = try await run("/usr/bin/identify", ["-format", "%w %h %k", picture]).standardOutput
        return Screenshot(made: made, fields: described.split(separator: " ").compactMap { Int($0) })
    }

    /// Copies the screenshot to the path the environment variable `variable`
    /// names (under the package when relative), when it is set, to be looked at.
    public func keep(asNamedBy variable: String) throws {
        guard let target = ProcessInfo.processInfo.environment[variable] else { return }
        let path = target.hasPrefix("/") ? target : "\(packageRoot)/\(target)"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: picture, toPath: path)
    }
}

import Foundation
import TestSupport

/// What `Config/screenshot-notification.sh` captured: the guardian's
/// `familyctl agent` on a real X server (Xvfb) with a real notification
/// daemon (dunst), run as the guardian against this Guard.
struct AgentScreenshot {
    /// How the script ended, and what it said.
    let made: ProcessResult
    /// ImageMagick's width, height and number of colours of the picture.
    let width: Int, height: Int, colours: Int
    /// `identify`'s own words, for a failure's message.
    let described: String

    /// Captures the screen the guardian sees while a request waits; with
    /// `click`, after clicking that action (the pinentry dialog it opens).
    /// With the environment variable `keepAs` naming a path (under the
    /// package when relative), the picture is kept there to be looked at.
    static func take(_ guardd: GuardFixture, click: String? = nil, keepAs: String) async throws -> AgentScreenshot {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try copyProgram("\(packageRoot)/Config/screenshot-notification.sh", to: "\(directory)/shot.sh")
        // What a booted system's tmpfiles make before any X server runs: the
        // sockets' folder, root's and sticky, which an X server not run as root will not create.
        try await sh("chown -R \(guardd.guardian.name) '\(directory)' && install -d -m 1777 -o root -g root /tmp/.X11-unix")
            .requireSuccess()
        let picture = "\(directory)/screen.png"
        let made = try await run("/usr/bin/setpriv", [
            "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
            "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=\(directory)", "LANG=C.UTF-8"]
            + (click.map { ["SCREENSHOT_CLICK=\($0)"] } ?? [])
            + ["FAMILYCTL=\(productPath("familyctl"))", "/bin/sh", "\(directory)/shot.sh", picture, "--socket", guardd.socket])
        guard made.status == 0 else { return AgentScreenshot(made: made, width: 0, height: 0, colours: 0, described: "") }
        let shown = try await run("/usr/bin/identify", ["-format", "%w %h %k", picture]).requireSuccess().standardOutput
        let fields = shown.split(separator: " ").compactMap { Int($0) }
        if let target = ProcessInfo.processInfo.environment[keepAs] {
            let path = target.hasPrefix("/") ? target : "\(packageRoot)/\(target)"
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: picture, toPath: path)
        }
        return AgentScreenshot(made: made, width: fields.first ?? 0, height: fields.dropFirst().first ?? 0,
                               colours: fields.count == 3 ? fields[2] : 0, described: shown)
    }
}

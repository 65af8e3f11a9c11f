import Foundation
import Testing
import TestSupport

/// The child's time warning from the real Guard to the child's own desktop:
/// a real login session (`runuser -l` through the shipped session module),
/// limits set with `familyctl`, and the child's X server, notification
/// daemon and session bus run as the child (`Config/screenshot-notification.sh`).
/// The Guard finds the bus where a desktop session keeps it,
/// `/run/user/UID/bus`, and posts through its own program run as the child.
@Suite(.serialized, .enabled(if: canRunGuard && familyctlSetsLimits && FileManager.default.fileExists(atPath: pamWrapperLibrary)
                                 && ["/usr/bin/Xvfb", "/usr/bin/xwininfo", "/usr/bin/dunst", "/usr/bin/import", "/usr/bin/identify",
                                     "/usr/bin/dbus-run-session"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                                 "needs root, the built products, libpam-wrapper, xvfb, x11-utils, dunst, imagemagick and dbus"))
struct TimeWarningDesktopTests {
    /// With FAMILYCONTROLS_GUARD_WARNING_SCREENSHOT naming a path (under the
    /// package when relative), the picture is kept there to be looked at.
    @Test func theGuardWarnsTheChildOnTheirOwnDesktop() async throws {
        try await withGuard { guardd in
            let child = guardd.child
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            let desktop = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: desktop) }
            chmod(desktop, 0o755)
            let screen = try await ChildDesktop.start(for: child, in: desktop)
            defer { _ = try? sh("pkill -KILL -u \(child.uid)") }
            // unix:path=/tmp/dbus-…,guid=…: the socket, linked where a desktop session keeps it.
            let address = screen.address
            let socket = try #require(address.split(separator: ",").first.flatMap { part in
                part.hasPrefix("unix:path=") ? String(part.dropFirst("unix:path=".count)) : nil
            }, "\(address)")
            let runtime = "/run/user/\(child.uid)"
            let made = try await sh("install -d -m 0700 -o \(child.name) -g \(child.gid) '\(runtime)' && ln -sfn '\(socket)' '\(runtime)/bus'")
            try #require(made.succeeded, "\(made.standardError)")
            defer { try? FileManager.default.removeItem(atPath: runtime) }

            try await guardd.familyctl(["set", "--user", child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            // 4 minutes: the 5-minute warning is due as soon as the child logs in.
            try await guardd.familyctl(["limits", "set", "--user", child.name, "--app", GuardFixture.appID,
                                        "--daily", "4m"]).requireSuccess()
            let session = try logins.login(child.name, "echo in; read line")
            defer { session.stop() }
            #expect(await eventually(timeout: .seconds(30)) { guardd.log.contains("time: \(child.name) warned") },
                    "\(guardd.log.suffix(3000))")
            // Due as the session opens: told again at the keeper's next looks if its desktop did not show it yet.
            #expect(await eventually(timeout: .seconds(60)) { guardd.log.contains("the desktop of session") },
                    "told only elsewhere: \(guardd.log.suffix(3000))")

            let shown = try await screen.screenshot()
            #expect(shown.made.status == 0, "\(shown.made.standardError)")
            // The background alone is one colour; the notification's text brings many.
            #expect(shown.fields.count == 3 && shown.fields[2] > 20, "the child's screen shows no notification: \(shown.fields)")
            try screen.keep(asNamedBy: "FAMILYCONTROLS_GUARD_WARNING_SCREENSHOT")
        }
    }
}

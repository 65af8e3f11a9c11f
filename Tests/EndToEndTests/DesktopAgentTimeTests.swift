import Foundation
import Testing
import TestSupport

private let desktopToolsPresent = ["/usr/bin/dbus-run-session", "/usr/bin/dbus-send", "/usr/bin/pinentry-tty"]
    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && (try? run(DesktopSession.python, ["-c", "import dbus, gi.repository.GLib"]))?.succeeded == true

/// A child's app asks for more time, and a parent approves it from their
/// desktop: the agent's notification says what is asked, Approve and the
/// parent's password in pinentry give the minutes asked, and the app hears it.
@Suite(.serialized, .enabled(if: canRunGuard && desktopToolsPresent,
                             "needs root, useradd, `swift build` products, dbus-run-session, pinentry-tty and python3-dbus"))
struct DesktopAgentTimeTests {
    /// The child's day is spent: a real `su -` login is refused until the
    /// parent approves, and gets in after.
    @Test func moreTimeAskedByTheAppIsGivenFromTheParentsDesktop() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let approved = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)")
            try await guardd.app(["limits", "set", "--daily", "0m"]).requireSuccess()
            let stack = try await PrivateLoginStack.make(socket: guardd.socket, limits: "\(guardd.stateDirectory)/login-limits")
            defer { stack.remove() }
            let logins = RealLogins(stack: stack)
            let refused = try await logins.su(guardd.child.name, until: false)
            #expect(refused.standardError.contains("Your time for today is used up"), "\(refused.standardError)")
            let desktop = try DesktopSession(as: guardd.guardian, socket: guardd.socket)
            defer { desktop.stop() }
            #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("notifications through") },
                    "\((try? desktop.terminal()) ?? "")")

            let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                   ["more-time", "25", "--reason", "homework", "--stdin"]))
            defer { app.stop() }
            let notified = { ((try? desktop.calls()) ?? []).filter { $0.call == "Notify" } }
            #expect(await eventually { !notified().isEmpty }, "\((try? desktop.terminal()) ?? "")")
            let posted = try #require(notified().first)
            let body = posted.body ?? ""
            #expect(body.contains("25") && body.contains(guardd.child.name), "the notification says what is asked: \(body)")
            #expect(posted.actions == ["approve", "Approve", "deny", "Deny"])

            #expect(try desktop.click(posted.id, "approve"))
            #expect(try desktop.type(guardd.guardian.password ?? "", at: "Password:"),
                    "pinentry never asked: \((try? desktop.terminal()) ?? "")")
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(app.standardOutput == "more time: 25 minutes given\n", "\(app.standardError)")
            let limits = try await guardd.familyctl(["limits", "--json", "--user", guardd.child.name]).requireSuccess()
            let object = try JSONSerialization.jsonObject(with: Data(limits.standardOutput.utf8)) as? [String: Any]
            let child = (object?["children"] as? [[String: Any]])?.first
            #expect(child?["extra"] as? Int == 1500, "\(limits.standardOutput)")
            let back = try await logins.su(guardd.child.name, until: true)
            #expect(back.status == 0 && back.standardOutput.contains(RealLogins.marker), "\(back.standardError)")
        }
    }

    /// A looser setting the app asks for (3 hours a day in place of 1) is a
    /// request the parent approves from their desktop like every other.
    @Test func looserLimitsTheAppAsksForAreApprovedFromTheParentsDesktop() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let approved = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)")
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            let desktop = try DesktopSession(as: guardd.guardian, socket: guardd.socket)
            defer { desktop.stop() }
            #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("notifications through") },
                    "\((try? desktop.terminal()) ?? "")")

            let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                   ["limits", "set", "--daily", "3h", "--stdin"]))
            defer { app.stop() }
            let notified = { ((try? desktop.calls()) ?? []).filter { $0.call == "Notify" } }
            #expect(await eventually { !notified().isEmpty }, "\((try? desktop.terminal()) ?? "")")
            let posted = try #require(notified().first)
            #expect((posted.body ?? "").contains(guardd.child.name), "the notification names the child: \(posted.body ?? "")")
            #expect(posted.actions == ["approve", "Approve", "deny", "Deny"])
            #expect(try await dailySeconds(guardd) == 3600, "nothing looser before the parent decides")

            #expect(try desktop.click(posted.id, "approve"))
            #expect(try desktop.type(guardd.guardian.password ?? "", at: "Password:"),
                    "pinentry never asked: \((try? desktop.terminal()) ?? "")")
            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(try await eventually(asking: { try await dailySeconds(guardd) == 10800 }), "\(guardd.log.suffix(1500))")
            let audit = try await guardd.auditRows().filter { $0.contains(" limits ") }
            #expect(audit.contains("\(guardd.guardian.name) limits \(guardd.child.name) \(GuardFixture.appID) approved"), "\(audit)")
            #expect(app.standardOutput == "limits: approved by a parent or guardian\n", "\(app.standardError)")
        }
    }

    private func dailySeconds(_ guardd: GuardFixture) async throws -> Int? {
        let limits = try await guardd.familyctl(["limits", "--json", "--user", guardd.child.name]).requireSuccess()
        let object = try JSONSerialization.jsonObject(with: Data(limits.standardOutput.utf8)) as? [String: Any]
        return ((object?["children"] as? [[String: Any]])?.first)?["daily"] as? Int
    }

    /// The notification a parent sees for more time, on a real X server
    /// (Xvfb) with a real notification daemon (dunst), through
    /// `Config/screenshot-notification.sh`; with FAMILYCONTROLS_TIME_SCREENSHOT
    /// set, the picture is kept there to be looked at.
    @Test(.enabled(if: ["/usr/bin/Xvfb", "/usr/bin/xwininfo", "/usr/bin/dunst", "/usr/bin/import", "/usr/bin/identify"]
                    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }, "needs xvfb, x11-utils, dunst and imagemagick"))
    func theParentsNotificationOfMoreTimeIsCaptured() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let approved = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)")
            try await guardd.app(["limits", "set", "--daily", "1h"]).requireSuccess()
            let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                   ["more-time", "25", "--reason", "homework", "--stdin"]))
            defer { app.stop() }
            _ = try await guardd.waitForPendingRequest()

            let shot = try await AgentScreenshot.take(guardd, keepAs: "FAMILYCONTROLS_TIME_SCREENSHOT")
            #expect(shot.made.status == 0, "\(shot.made.standardError)")
            #expect(shot.width == 900 && shot.height == 200, "\(shot.described)")
            #expect(shot.colours > 20, "the screen shows nothing: \(shot.described)")
        }
    }
}

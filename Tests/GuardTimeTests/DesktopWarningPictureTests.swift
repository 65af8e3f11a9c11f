import Foundation
@testable import GuardSessions
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// The child's time warning as the child sees it: a real X server (Xvfb), a
/// real notification daemon (dunst) on the child's own session bus, all run
/// as the child by `Config/screenshot-notification.sh`, and the warning
/// posted there by the Guard's own program run as the child
/// (``DesktopMessenger``), with the words the time keeper uses.
@Suite(.serialized, .enabled(if: canManageUsers && productExists("familycontrolsd")
                                 && ["/usr/bin/Xvfb", "/usr/bin/xwininfo", "/usr/bin/dunst", "/usr/bin/import",
                                     "/usr/bin/identify", "/usr/bin/dbus-run-session"]
                                     .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                                 "needs root, useradd, the built Guard, xvfb, x11-utils, dunst, imagemagick and dbus"))
struct DesktopWarningPictureTests {
    /// With FAMILYCONTROLS_WARNING_SCREENSHOT naming a path (under the
    /// package when relative), the picture is kept there to be looked at.
    @Test func theChildsWarningIsCapturedOnADesktop() async throws {
        try await withThrowawayUser(prefix: "tw") { child in
            try await withTemporaryDirectory { directory in
                let (helper, desktop) = try childDesktop(in: directory)
                let screen = try await ChildDesktop.start(for: child, in: desktop)
                defer { _ = try? sh("pkill -KILL -u \(child.uid)") }

                let limits = ChildTimeLimits(uid: child.uid, user: child.name, limits: TimeLimits(daily: SessionDuration(seconds: 5_400)),
                                             appNames: ["Homework Filter"], day: "2026-12-06")
                let message = TimeRules.warning(secondsLeft: 300, for: limits)
                #expect(message == "5 minutes left: then your screen will lock. Time limit set by Homework Filter; "
                    + "a parent or guardian can give you more time.")
                var session = fakeSession(uid: child.uid, user: child.name, leader: 4242).session
                session.bus = screen.address
                let told = DesktopMessenger(helper: helper).tell(message, in: [MonitorSession(name: "pam-4242", session: session)])
                #expect(told.contains("the desktop of session pam-4242"), "\(told)")

                let shown = try await screen.screenshot()
                #expect(shown.made.status == 0, "\(shown.made.standardError)")
                let fields = shown.fields
                #expect(fields.count == 3 && fields[0] == 900 && fields[1] == 200, "\(fields)")
                // The background alone is one colour; the notification's text brings many.
                #expect(fields.count == 3 && fields[2] > 20, "the screen shows no notification: \(fields)")
                try screen.keep(asNamedBy: "FAMILYCONTROLS_WARNING_SCREENSHOT")
            }
        }
    }
}

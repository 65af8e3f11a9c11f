import Foundation
import GuardIdentity
@testable import GuardSessions
import GuardTime
import SystemKit
import TestSupport
import Testing

/// A warning on the child's desktop: the Guard's own program, run as the
/// child with their session's bus, posts it to the notification server
/// there (a real session bus, `dbus-run-session`, and a server recording
/// every `Notify`, run as the child).
@Suite(.serialized, .enabled(if: canManageUsers && productExists("familycontrolsd")
                                 && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session"),
                                 "needs root, useradd, the built Guard and dbus-run-session"))
struct DesktopWarningTests {
    static let server = #"""
    import json, os, sys
    import dbus, dbus.service, dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    log, ready = sys.argv[1], sys.argv[2]

    class Server(dbus.service.Object):
        @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u",
                             sender_keyword="sender")
        def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout, sender=None):
            with open(log, "a") as f:
                f.write(json.dumps({"app": str(app), "summary": str(summary), "body": str(body),
                                    "caller": int(bus.get_unix_user(sender))}) + "\n")
            return 1

        @dbus.service.method("org.freedesktop.Notifications", out_signature="as")
        def GetCapabilities(self):
            return ["body"]

    name = dbus.service.BusName("org.freedesktop.Notifications", bus)
    Server(bus, "/org/freedesktop/Notifications")
    with open(ready, "w") as f:
        f.write(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    GLib.MainLoop().run()
    """#

    @Test func aWarningIsPostedOnTheChildsDesktopByTheGuardsProgramRunAsTheChild() async throws {
        try await withThrowawayUser(prefix: "tn") { child in
            try await withTemporaryDirectory { directory in
                let (helper, desktop) = try childDesktop(in: directory)
                try Self.server.write(toFile: "\(desktop)/server.py", atomically: false, encoding: .utf8)
                #expect(try sh("chown -R \(child.name) '\(desktop)'").succeeded)
                let session = Process()
                session.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                session.arguments = ["--reuid=\(child.uid)", "--regid=\(child.gid)", "--clear-groups", "/usr/bin/env", "-i",
                                     "PATH=/usr/bin:/bin", "HOME=\(desktop)", "/usr/bin/dbus-run-session", "--",
                                     "/usr/bin/python3", "\(desktop)/server.py", "\(desktop)/calls.jsonl", "\(desktop)/ready"]
                session.standardOutput = FileHandle.nullDevice
                session.standardError = FileHandle.nullDevice
                try session.run()
                defer {
                    _ = try? sh("pkill -KILL -u \(child.uid)")
                    session.waitUntilExit()
                }
                #expect(waitFor(seconds: 15) { FileManager.default.fileExists(atPath: "\(desktop)/ready") })
                let bus = try String(contentsOfFile: "\(desktop)/ready", encoding: .utf8)
                #expect(bus.hasPrefix("unix:"))

                let messenger = DesktopMessenger(helper: helper)
                var loginSession = fakeSession(uid: child.uid, user: child.name, leader: 4242).session
                loginSession.bus = bus
                let message = "5 minutes left: then your screen will lock (time limit set by FamilyControls <Demo> & co)"
                let told = messenger.tell(message, in: [MonitorSession(name: "pam-4242", session: loginSession)])
                #expect(told.contains("the desktop of session pam-4242"), "\(told)")
                let calls = (try? String(contentsOfFile: "\(desktop)/calls.jsonl", encoding: .utf8)) ?? ""
                let posted = try #require(calls.split(separator: "\n").first.flatMap {
                    try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }, "the server got: \(calls)")
                #expect(posted["caller"] as? Int == Int(child.uid), "posted by the child's own process: \(posted)")
                #expect(posted["summary"] as? String == "Time limit")
                #expect(posted["body"] as? String == "5 minutes left: then your screen will lock (time limit set by FamilyControls &lt;Demo&gt; &amp; co)")

                // A helper that cannot reach a server tells no desktop.
                loginSession.bus = "unix:path=\(desktop)/nothing-here"
                #expect(!messenger.tell(message, in: [MonitorSession(name: "pam-4243", session: loginSession)])
                    .contains("the desktop of session pam-4243"))
                // A session without a bus (and no runtime folder of the child's with one) gets no helper at all.
                loginSession.bus = nil
                loginSession.runtimeDirectory = "\(desktop)/no-runtime"
                let before = (try? String(contentsOfFile: "\(desktop)/calls.jsonl", encoding: .utf8)) ?? ""
                #expect(messenger.tell(message, in: [MonitorSession(name: "pam-4244", session: loginSession)]).isEmpty)
                #expect(((try? String(contentsOfFile: "\(desktop)/calls.jsonl", encoding: .utf8)) ?? "") == before)
            }
        }
    }
}

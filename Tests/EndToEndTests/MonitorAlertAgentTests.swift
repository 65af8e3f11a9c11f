import Foundation
import Testing
import TestSupport

private let agentToolsPresent = ["/usr/bin/dbus-run-session", "/usr/bin/dbus-send"]
    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && (try? run(DesktopSession.python, ["-c", "import dbus, gi.repository.GLib"]))?.succeeded == true

/// A Varlink service run by root at a socket of its own, standing in for the
/// Guard where the real one cannot yet raise a monitor alert: `WatchRequests`
/// answers one request, and a second one once the alerts' watch was
/// answered; `WatchMonitorAlerts` answers the watch's start and then
/// `alert`, or, as a Guard older than the method, `MethodNotFound`. Every
/// method it hears is written to `calls`, one name a line.
private final class StandInGuard {
    let socket: String
    let calls: String
    private let directory: String
    private let process: Process

    static let script = #"""
        import json, os, signal, socket, sys, threading, time
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # Foundation's Process starts it with signals blocked
        path, calls, mode, alert = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
        answered = threading.Event()
        def request(n):
            return {"id": n, "user": "kid", "app": "org.example.App%d" % n, "name": "App %d" % n,
                    "path": "/srv/apps/kid/org.example.App%d" % n, "purpose": "approve",
                    "created": time.time(), "expires": time.time() + 3600}
        def send(c, obj):
            c.sendall(json.dumps(obj).encode() + b"\0")
        def serve(c):
            buf = b""
            while True:
                data = c.recv(65536)
                if not data:
                    return
                buf += data
                while b"\0" in buf:
                    msg, buf = buf.split(b"\0", 1)
                    method = json.loads(msg)["method"]
                    with open(calls, "a") as f:
                        f.write(method.rsplit(".", 1)[1] + "\n")
                    if method.endswith(".WatchRequests"):
                        send(c, {"parameters": {"requests": [request(1)]}, "continues": True})
                        answered.wait(20)
                        time.sleep(0.5)
                        send(c, {"parameters": {"requests": [request(1), request(2)]}, "continues": True})
                    elif method.endswith(".WatchMonitorAlerts") and mode == "alerts":
                        send(c, {"parameters": {"alert": None}, "continues": True})
                        time.sleep(0.3)
                        send(c, {"parameters": {"alert": alert}, "continues": True})
                        answered.set()
                    else:
                        send(c, {"error": "org.varlink.service.MethodNotFound", "parameters": {"method": method}})
                        answered.set()
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path); os.chmod(path, 0o777); s.listen(8)
        open(calls, "w").close(); os.chmod(calls, 0o644)
        while True:
            c, _ = s.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """#

    /// Starts the service as root (the agent refuses any other) in a new
    /// directory; `olderGuard` answers `WatchMonitorAlerts` with `MethodNotFound`.
    init(alert: [String: Any], olderGuard: Bool = false) throws {
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        socket = "\(directory)/guard.socket"
        calls = "\(directory)/calls"
        let alertText = String(decoding: try JSONSerialization.data(withJSONObject: alert), as: UTF8.self)
        process = Process()
        process.executableURL = URL(fileURLWithPath: DesktopSession.python)
        process.arguments = ["-c", Self.script, socket, calls, olderGuard ? "old" : "alerts", alertText]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var heard: [String] {
        ((try? String(contentsOfFile: calls, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A child's monitor that keeps ending, as the guardian's desktop agent
/// tells it: the agent follows `WatchMonitorAlerts` beside `WatchRequests`
/// and posts each alert to a real notification server on a real session
/// bus, escaped; without a server it prints it; an older Guard without the
/// method leaves it with requests only. The Guard's side is a stand-in at
/// the socket (run by root, as the agent requires).
@Suite(.serialized, .enabled(if: getuid() == 0 && agentToolsPresent,
                             "needs root, useradd, `swift build` products, dbus-run-session and python3-dbus"))
struct MonitorAlertAgentTests {
    private static let hostileName = "<b>Free</b> <a href=\"http://x\">games</a> & \u{1B}[31mred\u{202E}"
    private static var alert: [String: Any] { [
        "appID": "org.example.Hostile", "appName": hostileName, "user": "kid", "session": "c2",
        "restarts": 12, "windowSeconds": 60, "ended": "signal 9", "waitingSeconds": 30,
    ] }

    private func notifications(_ desktop: DesktopSession) -> [DesktopSession.Call] {
        ((try? desktop.calls()) ?? []).filter { $0.call == "Notify" }
    }

    @Test func aMonitorAlertBecomesAnEscapedNotificationWithoutActions() async throws {
        let guardian = try await offload { try makeThrowawayUser(prefix: "g", password: false) }
        defer { removeThrowawayUser(guardian) }
        let standIn = try StandInGuard(alert: Self.alert)
        defer { standIn.stop() }
        #expect(await eventually { FileManager.default.fileExists(atPath: standIn.socket) })
        let desktop = try DesktopSession(as: guardian, socket: standIn.socket)
        defer { desktop.stop() }
        #expect(await eventually { notifications(desktop).contains { $0.summary == "A monitor keeps ending" } },
                "\((try? desktop.terminal()) ?? "")")
        #expect(standIn.heard.contains("WatchMonitorAlerts"))
        let posted = try #require(notifications(desktop).first { $0.summary == "A monitor keeps ending" })
        #expect(posted.actions ?? [] == [])
        let body = try #require(posted.body)
        #expect(body == "The monitor of “&lt;b&gt;Free&lt;/b&gt; &lt;a href=\"http://x\"&gt;games&lt;/a&gt; &amp; "
            + "\\x1B[31mred\\u{202E}” for kid keeps stopping: 12 times in 1 minute, the last time it was killed; "
            + "FamilyControls starts it again in 30 seconds (familyctl monitors says more).", "\(body)")
        for raw in ["<", ">", "\u{1B}", "\u{202E}"] {
            #expect(!body.contains(raw), "the body carries \(raw.debugDescription) as it came")
        }
        // The requests go on beside the alerts: the second request comes after the alert.
        #expect(await eventually { notifications(desktop).contains { $0.summary == "FamilyControls request 2" } })
        #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("monitor alert: the monitor of ") })
    }

    @Test func anOlderGuardWithoutMonitorAlertsLeavesTheAgentWithRequests() async throws {
        let guardian = try await offload { try makeThrowawayUser(prefix: "g", password: false) }
        defer { removeThrowawayUser(guardian) }
        let standIn = try StandInGuard(alert: Self.alert, olderGuard: true)
        defer { standIn.stop() }
        #expect(await eventually { FileManager.default.fileExists(atPath: standIn.socket) })
        let desktop = try DesktopSession(as: guardian, socket: standIn.socket)
        defer { desktop.stop() }
        // Request 2 arrives only after WatchMonitorAlerts was refused: the agent is still there to post it.
        #expect(await eventually { notifications(desktop).contains { $0.summary == "FamilyControls request 2" } },
                "\((try? desktop.terminal()) ?? "")")
        #expect(standIn.heard.contains("WatchMonitorAlerts"))
        #expect(!notifications(desktop).contains { $0.summary == "A monitor keeps ending" })
        #expect(!((try? desktop.terminal()) ?? "").contains("MethodNotFound"))
    }

    @Test func withoutANotificationServerTheAgentPrintsTheAlert() async throws {
        let guardian = try await offload { try makeThrowawayUser(prefix: "g", password: false) }
        defer { removeThrowawayUser(guardian) }
        let standIn = try StandInGuard(alert: Self.alert)
        defer { standIn.stop() }
        #expect(await eventually { FileManager.default.fileExists(atPath: standIn.socket) })
        let desktop = try DesktopSession(as: guardian, socket: standIn.socket, withServer: false)
        defer { desktop.stop() }
        #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("monitor alert: ") })
        let shown = try desktop.terminal()
        let line = try #require(shown.split(whereSeparator: \.isNewline).first { $0.contains("monitor alert: ") })
        #expect(line.hasSuffix("monitor alert: the monitor of “<b>Free</b> <a href=\"http://x\">games</a> & "
            + "\\x1B[31mred\\u{202E}” for kid keeps stopping: 12 times in 1 minute, the last time it was killed; "
            + "FamilyControls starts it again in 30 seconds (familyctl monitors says more)"), "\(shown)")
        #expect(!shown.contains("\u{1B}["), "the terminal got the raw escape")
        // The requests go on beside the alert: the second one comes after it.
        #expect(await eventually { ((try? desktop.terminal()) ?? "").contains("new request 2: ") }, "\(shown)")
    }
}

import Foundation
import TestSupport

/// A guardian's desktop session for `familyctl agent`: a real session bus
/// (`dbus-run-session`), a real notification server on it (a separate
/// Python process owning `org.freedesktop.Notifications`, python3-dbus,
/// recording every `Notify` and `CloseNotification` and emitting
/// `ActionInvoked` when the test clicks), and the agent on a real
/// pseudo-terminal with `pinentry-tty` as its pinentry, all run as the
/// guardian. The test speaks to the driver inside the session one JSON line
/// at a time.
final class DesktopSession: @unchecked Sendable {
    /// One call the server received.
    struct Call: Decodable {
        var call: String
        var id: UInt32
        var wall: Double
        var summary: String?
        var body: String?
        var actions: [String]?
        var hints: [String]?
    }

    /// Debian's Python, which python3-dbus and python3-gi are installed for.
    static let python = "/usr/bin/python3"

    private let process: Process
    private let input: FileHandle
    private let output: FileHandle
    private var buffered = Data()
    let directory: String

    /// Starts the session as `user`; `withServer: false` leaves the bus without a notification server.
    init(as user: ThrowawayUser, socket: String, withServer: Bool = true) throws {
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        try Self.script.write(toFile: "\(directory)/desktop.py", atomically: false, encoding: .utf8)
        try sh("chown \(user.name) '\(directory)'").requireSuccess()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                             "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=\(directory)", "LANG=C.UTF-8",
                             "/usr/bin/dbus-run-session", "--", DesktopSession.python, "\(directory)/desktop.py", "drive",
                             "\(directory)/calls.jsonl", productPath("familyctl"), socket, withServer ? "server" : "none"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        try process.run()
        _ = try receive()
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        try? input.write(contentsOf: Data("{\"cmd\": \"quit\"}\n".utf8))
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func send(_ command: [String: Any]) throws -> [String: Any] {
        try input.write(contentsOf: JSONSerialization.data(withJSONObject: command) + Data("\n".utf8))
        return try receive()
    }

    private func receive() throws -> [String: Any] {
        while true {
            if let newline = buffered.firstIndex(of: 10) {
                let line = buffered[..<newline]
                buffered = Data(buffered[(newline + 1)...])
                guard let object = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    throw FixtureError("the desktop driver said something else")
                }
                return object
            }
            let chunk = output.availableData
            guard !chunk.isEmpty else { throw FixtureError("the desktop driver ended") }
            buffered += chunk
        }
    }

    /// What the agent's terminal showed (pinentry's dialog included).
    func terminal() throws -> String { try send(["cmd": "output"])["output"] as? String ?? "" }

    /// Every call the notification server received, in order.
    func calls() throws -> [Call] {
        let lines = (try? String(contentsOfFile: "\(directory)/calls.jsonl", encoding: .utf8)) ?? ""
        return try lines.split(separator: "\n").map { try JSONDecoder().decode(Call.self, from: Data($0.utf8)) }
    }

    /// Clicks `action` on notification `id`: the server emits `ActionInvoked`.
    func click(_ id: UInt32, _ action: String) throws -> Bool {
        try send(["cmd": "invoke", "id": id, "action": action])["ok"] as? Bool ?? false
    }

    /// Another client of the bus (not the server) emits `ActionInvoked`.
    func forgeClick(_ id: UInt32, _ action: String) throws -> Bool {
        try send(["cmd": "forge", "id": id, "action": action])["ok"] as? Bool ?? false
    }

    /// Waits for `prompt` on the agent's terminal (since the last answer), then types `text` and Return.
    func type(_ text: String, at prompt: String) throws -> Bool {
        try send(["cmd": "type", "prompt": prompt, "text": text])["typed"] as? Bool ?? false
    }

    static let script = #"""
    import json, os, pty, select, signal, subprocess, sys, time

    NAME, PATH = "org.freedesktop.Notifications", "/org/freedesktop/Notifications"

    def serve(log):
        import dbus, dbus.service, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.SessionBus()

        def record(entry):
            entry["wall"] = time.time()
            with open(log, "a") as f:
                f.write(json.dumps(entry) + "\n")

        class Server(dbus.service.Object):
            next_id = 0

            @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
            def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
                Server.next_id += 1
                record({"call": "Notify", "id": Server.next_id, "summary": str(summary), "body": str(body),
                        "actions": [str(a) for a in actions], "hints": sorted(str(k) for k in hints)})
                return Server.next_id

            @dbus.service.method(NAME, in_signature="u")
            def CloseNotification(self, id):
                record({"call": "CloseNotification", "id": int(id)})
                self.NotificationClosed(id, 3)

            @dbus.service.method(NAME, out_signature="as")
            def GetCapabilities(self):
                return ["actions", "body", "body-markup", "persistence"]

            @dbus.service.method(NAME, out_signature="ssss")
            def GetServerInformation(self):
                return ("familycontrols-test", "FamilyControls", "1", "1.2")

            @dbus.service.signal(NAME, signature="us")
            def ActionInvoked(self, id, action):
                pass

            @dbus.service.signal(NAME, signature="uu")
            def NotificationClosed(self, id, reason):
                pass

            # The test's click: what a server does when the person chooses an action.
            @dbus.service.method("org.familycontrols.Test", in_signature="us")
            def Invoke(self, id, action):
                self.ActionInvoked(id, action)
                self.NotificationClosed(id, 2)

        name = dbus.service.BusName(NAME, bus)
        Server(bus, PATH)
        GLib.MainLoop().run()

    def owned():
        r = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                            "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:" + NAME],
                           capture_output=True, text=True)
        return "boolean true" in r.stdout

    def drive(log, familyctl, socket, mode):
        server = None
        if mode == "server":
            server = subprocess.Popen([sys.executable, __file__, "serve", log])
            deadline = time.time() + 20
            while not owned() and time.time() < deadline:
                time.sleep(0.05)
        env = {"PATH": "/usr/bin:/bin", "DBUS_SESSION_BUS_ADDRESS": os.environ["DBUS_SESSION_BUS_ADDRESS"],
               "PINENTRY": "/usr/bin/pinentry-tty", "TERM": "dumb", "LANG": "C.UTF-8", "HOME": os.environ["HOME"]}
        pid, fd = pty.fork()
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            os.execve(familyctl, [familyctl, "agent", "--socket", socket], env)
        out, mark = b"", 0
        def pump(timeout):
            nonlocal out
            ready, _, _ = select.select([fd], [], [], timeout)
            if ready:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    time.sleep(timeout)
        def reply(obj):
            sys.stdout.write(json.dumps(obj) + "\n")
            sys.stdout.flush()
        reply({"ready": True})
        stdin = sys.stdin.buffer
        pending = b""
        while True:
            ready, _, _ = select.select([fd, stdin], [], [], 0.1)
            if fd in ready:
                pump(0)
            if stdin not in ready:
                continue
            chunk = os.read(stdin.fileno(), 4096)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                cmd = json.loads(line)
                what = cmd["cmd"]
                if what == "quit":
                    os.kill(pid, signal.SIGTERM)
                    if server: server.kill()
                    return
                if what == "output":
                    reply({"output": out.decode(errors="replace")})
                elif what in ("invoke", "forge"):
                    if what == "invoke":
                        args = ["--type=method_call", "--print-reply", "--dest=" + NAME, PATH,
                                "org.familycontrols.Test.Invoke"]
                    else:
                        args = ["--type=signal", PATH, NAME + ".ActionInvoked"]
                    r = subprocess.run(["dbus-send", "--session"] + args +
                                       ["uint32:%d" % cmd["id"], "string:" + cmd["action"]], capture_output=True)
                    reply({"ok": r.returncode == 0})
                elif what == "type":
                    # A pure wait, ended by the prompt: 45 s for a machine running the whole suite.
                    deadline, typed = time.time() + 45, False
                    while time.time() < deadline:
                        if cmd["prompt"].encode() in out[mark:]:
                            time.sleep(0.2)
                            os.write(fd, cmd["text"].encode() + b"\n")
                            mark, typed = len(out), True
                            break
                        pump(0.1)
                    reply({"typed": typed})

    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        drive(*sys.argv[2:6])
    """#
}

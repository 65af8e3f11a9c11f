import Foundation
import TestSupport

/// An app that is a copy of the Python interpreter, installed like any other
/// in the child's app root: a child may put any program there, and the Guard
/// identifies it as the app all the same. It runs ``ScriptedApp/script``,
/// which speaks Varlink on one connection the way no library would.
enum ScriptedApp {
    static let appID = "org.familycontrols.Scripted"

    /// The first `python3` on the usual paths, followed to its real file so the
    /// copy is the interpreter itself.
    static var interpreter: String? {
        ["/usr/bin/python3", "/usr/local/bin/python3"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
            .map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
    }

    /// `pipeline COUNT`: sends COUNT `Subscribe` calls without waiting, tallies
    /// the first reply to each and says `flooded {tally}`; then says `update
    /// STATUS` for every later status reply, until standard input closes.
    ///
    /// `sequential ROUNDS`: runs ROUNDS of (GetStatus, Subscribe, a request
    /// refused at once, a revoke), each call after the reply to the last: a
    /// twentieth of them to warm up, then says `warmed` and waits for a line;
    /// then the rest, says `done {tally}`, and waits for standard input to close.
    static let script = #"""
        import json, socket, sys, threading
        path, mode, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)

        def say(*words):
            print(*words, file=sys.stderr, flush=True)

        def replies():
            buffer = b''
            while True:
                chunk = s.recv(1 << 16)
                if not chunk:
                    return
                *frames, buffer = (buffer + chunk).split(b'\0')
                for frame in frames:
                    yield json.loads(frame)

        def frame(method, parameters=None, more=False):
            call = {'method': 'org.familycontrols.guard.' + method}
            if parameters:
                call['parameters'] = parameters
            if more:
                call['more'] = True
            return json.dumps(call).encode() + b'\0'

        def tally(counts, key):
            counts[key] = counts.get(key, 0) + 1

        incoming = replies()
        if mode == 'pipeline':
            def send():
                batch = frame('Subscribe', more=True) * 1000
                for _ in range(count // 1000):
                    s.sendall(batch)
                s.sendall(frame('Subscribe', more=True) * (count % 1000))
            threading.Thread(target=send, daemon=True).start()
            counts = {}
            for reply in incoming:
                tally(counts, reply.get('error', 'status ' + reply.get('parameters', {}).get('status', '?')))
                if sum(counts.values()) == count:
                    break
            say('flooded', json.dumps(counts, sort_keys=True))
            def follow():
                for reply in incoming:
                    say('update', reply.get('parameters', {}).get('status', json.dumps(reply)))
            threading.Thread(target=follow, daemon=True).start()
            sys.stdin.read()
        else:
            plan = [('GetStatus', None, False, 10), ('Subscribe', None, True, 10),
                    ('RequestAuthorization', {'member': 'individual'}, True, 1), ('RevokeAuthorization', None, True, 1)]
            counts = {}
            for round in range(count):
                if round == count // 20:
                    say('warmed')
                    sys.stdin.readline()
                for method, parameters, more, times in plan:
                    for _ in range(times):
                        s.sendall(frame(method, parameters, more))
                        reply = next(incoming)
                        tally(counts, method + ' ' + reply.get('error', 'reply'))
            say('done', json.dumps(counts, sort_keys=True))
            sys.stdin.read()
        """#
}

extension GuardFixture {
    /// Installs the scripted app for the child.
    /// - Returns: the interpreter copy to run it with.
    func installScriptedApp() throws -> String {
        guard let interpreter = ScriptedApp.interpreter else { throw FixtureError("no python3 to copy") }
        let app = "\(appsRoot)/\(child.name)/\(ScriptedApp.appID)"
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        try copyProgram(interpreter, to: "\(app)/python3")
        let entry = """
            [Desktop Entry]
            Type=Application
            Name=Scripted
            Exec=python3
            X-FamilyControls=true

            """
        try entry.write(toFile: "\(app)/\(ScriptedApp.appID).desktop", atomically: false, encoding: .utf8)
        try sh("chown -R \(child.name):\(child.name) '\(appsRoot)/\(child.name)'").requireSuccess()
        return "\(app)/python3"
    }

    /// Starts the scripted app as the child in `mode` with `count`.
    func startScriptedApp(_ interpreter: String, mode: String, count: Int) throws -> RunningApp {
        try RunningApp(arguments: commandLine(as: child, executable: interpreter,
                                              ["-c", ScriptedApp.script, socket, mode, "\(count)"]))
    }

    /// A line of the Guard's `/proc/PID/status`, in KiB (`VmRSS`, `VmHWM`).
    func memory(_ field: String) throws -> Int {
        guard let pid = process?.processIdentifier else { throw FixtureError("the Guard is not running") }
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(field):") }),
              let kib = Int(line.split(separator: " ").dropFirst().first ?? "") else {
            throw FixtureError("no \(field) in /proc/\(pid)/status")
        }
        return kib
    }

    /// Restarts the Guard's peak resident size (`VmHWM`) from its current one.
    func resetMemoryPeak() throws {
        guard let pid = process?.processIdentifier else { throw FixtureError("the Guard is not running") }
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }
}

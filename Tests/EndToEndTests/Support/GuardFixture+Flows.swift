import Foundation
import Varlink
import TestSupport

/// The flows each of the unit's capabilities exists for, set up the way a
/// real site has them: homes only their owner can enter, private files in
/// the app, root libraries that change under running apps.
extension GuardFixture {
    static let privateAppID = "org.example.Private"

    /// The demo, installed in the child's home (mode 0700, as adduser makes
    /// them), with a private folder and file (0700, 0600), a data file, and
    /// a setgid program of the child's group (02755), whose mode root can put
    /// back only with `CAP_FSETID`, not being in that group.
    /// - Returns: the app directory.
    func installPrivateApp() throws -> String {
        let app = try installDemo(for: child, appID: Self.privateAppID, inHome: true)
        try sh("""
            set -e
            mkdir -m 0700 '\(app)/private'
            echo secret > '\(app)/private/key' && chmod 0600 '\(app)/private/key'
            echo original > '\(app)/data.txt'
            printf '#!/bin/sh\\n' > '\(app)/tool'
            chown -R \(child.name):\(child.name) '\(app)'
            chmod 02755 '\(app)/tool'
            chmod 0700 '\(homesRoot)/\(child.name)'
            """).requireSuccess()
        return app
    }

    /// The lock `familyctl status` shows for the child's `appID`: `locked`,
    /// `unenforced: REASON`, or nil when there is none.
    func lock(of appID: String = GuardFixture.appID) async throws -> String? {
        try await authorization(appID: appID).flatMap(Self.lockText)
    }

    /// An authorization's lock as words: its state, and an unenforced one's reason after it.
    static func lockText(_ authorization: JSONObject) -> String? {
        guard let state = authorization["lock"]?.stringValue else { return nil }
        return authorization["lockReason"]?.stringValue.map { "\(state): \($0)" } ?? state
    }

    /// Starts a process of the child's that holds `file` open for writing.
    func holdOpenForWriting(_ file: String) async throws -> Process {
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        writer.arguments = ["--reuid=\(child.uid)", "--regid=\(child.gid)", "--clear-groups",
                            "/bin/sh", "-c", "exec 3<>'\(file)'; exec sleep 60"]
        try writer.run()
        try await waitUntil(timeout: 60) {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(writer.processIdentifier)/fd")) ?? []).contains("3")
        }
        return writer
    }

    /// Lifts the attribute from `file` as root and changes its owner to the
    /// adult and its mode to 0666: drift that `familyctl locks verify` repairs.
    func loosen(_ file: String) async throws {
        try await sh("chattr -i '\(file)' && chown \(adult.name) '\(file)' && chmod 0666 '\(file)'").requireSuccess()
    }

    /// A root library, loaded by a running app of the child's and then
    /// replaced, as a package upgrade replaces one: the app maps a file that
    /// no path leads to any more, which only `/proc/PID/map_files` shows.
    /// - Returns: the Guard's answer to the app's `GetStatus`, as JSON text.
    func statusOfAnAppWhoseLibraryWasReplaced() async throws -> String {
        guard let library = ["/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0"]
            .first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw FixtureError("no libsqlite3.so.0 to load")
        }
        let interpreter = try installScriptedApp()
        let libraries = "\(directory)/lib"
        let copy = "\(libraries)/libexample.so"
        try await sh("install -d -m 0755 '\(libraries)' && install -m 0644 '\(library)' '\(copy)'").requireSuccess()
        let script = """
            import ctypes, json, socket, sys
            ctypes.CDLL(sys.argv[1])
            print('loaded', file=sys.stderr, flush=True)
            sys.stdin.readline()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[2])
            s.sendall(json.dumps({'method': 'org.familycontrols.guard.GetStatus'}).encode() + b'\\0')
            reply = b''
            while not reply.endswith(b'\\0'):
                reply += s.recv(65536)
            print('reply', reply[:-1].decode(), file=sys.stderr, flush=True)
            """
        let app = try RunningApp(arguments: commandLine(as: child, executable: interpreter, ["-c", script, copy, socket]))
        defer { app.stop() }
        guard await app.waitForError(containing: "loaded") else { throw FixtureError("the app never loaded: \(app.standardError)") }
        try await sh("install -m 0644 '\(library)' '\(copy).new' && mv '\(copy).new' '\(copy)'").requireSuccess()
        app.write("go\n")
        guard await app.waitForError(containing: "reply "), let line = app.standardError.split(separator: "\n").first(where: {
            $0.hasPrefix("reply ")
        }) else {
            throw FixtureError("the app got no answer: \(app.standardError)")
        }
        return String(line.dropFirst("reply ".count))
    }
}

extension GuardFixture {
    /// Sends the Guard SIGHUP and waits for its next "reloaded" line, which
    /// it logs once the new configuration took effect.
    func reload() async throws {
        let line = "reloaded \(configPath)"
        let before = log.components(separatedBy: line).count
        guard let pid = process?.processIdentifier else { throw FixtureError("no Guard runs to reload") }
        kill(pid, SIGHUP)
        try await waitUntil(timeout: 30) { self.log.components(separatedBy: line).count > before }
    }
}

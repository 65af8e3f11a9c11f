import Foundation
import Testing
import TestSupport

/// Requests that wait for people are bounded per user, and a guardian's
/// decision never waits behind them: local users who are no one's family,
/// each opening as many requests as the Guard lets one user connect and
/// never answering, cannot keep a guardian from approving a child's request.
@Suite(.serialized, .enabled(if: canRunGuard && ScriptedApp.interpreter != nil,
                             "needs root, useradd, python3, and `swift build` products"))
struct ConversationFairnessTests {
    /// Users who flood the Guard, and connections each: together enough to
    /// take every conversation thread a Guard without a per-user bound had.
    static let strangers = 8
    static let connectionsEach = 64

    /// Opens COUNT connections, starts an individual request on each and
    /// answers nothing; after SETTLE seconds says `tally {first reply: count}`
    /// ("waiting" for none yet) and holds the connections until standard
    /// input closes.
    static let flood = #"""
        import json, select, socket, sys, time
        path, count, settle = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
        call = json.dumps({'method': 'org.familycontrols.guard.RequestAuthorization',
                           'parameters': {'member': 'individual'}, 'more': True}).encode() + b'\0'
        connections = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(call)
            connections.append(s)
        first, buffers = {}, {s: b'' for s in connections}
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline and len(first) < count:
            ready, _, _ = select.select([s for s in connections if s not in first], [], [], 0.1)
            for s in ready:
                chunk = s.recv(1 << 16)
                if not chunk:
                    first[s] = 'closed'
                    continue
                buffers[s] += chunk
                if b'\0' in buffers[s]:
                    reply = json.loads(buffers[s].split(b'\0')[0])
                    if 'error' in reply:
                        first[s] = reply['error'] + ': ' + reply.get('parameters', {}).get('message', '')
                    else:
                        first[s] = 'prompt ' + (reply.get('parameters', {}).get('prompt') or {}).get('kind', '?')
        counts = {}
        for s in connections:
            key = first.get(s, 'waiting')
            counts[key] = counts.get(key, 0) + 1
        print('tally', json.dumps(counts, sort_keys=True), file=sys.stderr, flush=True)
        sys.stdin.read()
        """#

    @Test func strangersHoldingRequestsOpenNeverKeepAGuardianFromApproving() async throws {
        try await withGuard { guardd in
            // The child's request waits for the guardian first.
            let request = try guardd.startApp(executable: guardd.appExecutable)
            defer { request.stop() }
            let id = try await request.waitForPendingRequest()

            let strangers = try await offload {
                try (0..<Self.strangers).map { _ in try makeThrowawayUser(prefix: "s", password: false) }
            }
            var floods: [RunningApp] = []
            defer {
                for flood in floods { flood.stop() }
                for stranger in strangers { removeThrowawayUser(stranger) }
            }
            for stranger in strangers {
                let interpreter = try guardd.installScriptedApp(for: stranger)
                floods.append(try RunningApp(arguments: guardd.commandLine(
                    as: stranger, executable: interpreter,
                    ["-c", Self.flood, guardd.socket, "\(Self.connectionsEach)", "25"])))
            }
            for flood in floods {
                #expect(await flood.waitForError(containing: "tally ", timeout: .seconds(90)), "\(flood.standardError)")
            }

            // Someone who is no one's child asking as a child is refused at
            // once, for what they are, not because the Guard is busy. Queued
            // behind the strangers, whose requests stay open until the test
            // ends, it would wait for the Guard's 60 s prompt timeout; 20 s
            // leaves room for starting the app on a loaded machine (9 s seen).
            let started = ContinuousClock.now
            let stranger = try await guardd.app(["request", "--member", "child", "--stdin"], as: guardd.adult)
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(stranger.status != 0)
            #expect(stranger.standardError.contains("is not a child in the family configuration"), "\(stranger.standardError)")

            // The guardian decides while every stranger's requests are open.
            let decided = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            request.endInput()
            #expect(await request.exitStatus() == 0, "\(request.standardError)")
            #expect(try await guardd.storedStatus() == "approved")

            // Each stranger got a few requests under way; the rest were refused
            // at once, saying why.
            let bound = 4
            for (stranger, flood) in zip(strangers, floods) {
                let counts = try tally(in: flood.standardError)
                let refused = counts.filter { $0.key.hasPrefix("org.familycontrols.guard.") }
                #expect(counts.filter { !$0.key.hasPrefix("org.familycontrols.guard.") }.values.reduce(0, +) == bound,
                        "\(stranger.name): \(counts)")
                #expect(refused == ["org.familycontrols.guard.Unavailable: the Guard is busy: \(stranger.name) already has "
                    + "\(bound) requests under way, the most one user may have at once; finish or cancel one first":
                        Self.connectionsEach - bound], "\(stranger.name): \(counts)")
                // The Guard's log says so once, not once per refusal.
                #expect(guardd.log.components(separatedBy: "request refused: \(stranger.name) already has").count - 1 == 1)
            }

            // A stranger who hangs up gets their places back: the requests
            // waiting behind the open one stop waiting with their app.
            let first = try #require(strangers.first)
            floods[0].stop()
            // The Guard hears the hang-ups on its loop; a waiter checks four times a second.
            try await Task.sleep(for: .seconds(1))
            let again = try RunningApp(arguments: guardd.commandLine(
                as: first, executable: "\(guardd.appsRoot)/\(first.name)/\(ScriptedApp.appID)/python3",
                ["-c", Self.flood, guardd.socket, "\(bound + 1)", "3"]))
            floods.append(again)
            #expect(await again.waitForError(containing: "tally ", timeout: .seconds(30)), "\(again.standardError)")
            let counts = try tally(in: again.standardError)
            #expect(counts.filter { !$0.key.hasPrefix("org.familycontrols.guard.") }.values.reduce(0, +) == bound, "\(counts)")
            #expect(counts.filter { $0.key.hasPrefix("org.familycontrols.guard.Unavailable") }.values.reduce(0, +) == 1, "\(counts)")
        }
    }

    /// The tally a flood printed.
    private func tally(in output: String) throws -> [String: Int] {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tally ") }) else {
            throw FixtureError("no tally in: \(output)")
        }
        return try JSONDecoder().decode([String: Int].self, from: Data(line.dropFirst("tally ".count).utf8))
    }
}

extension GuardFixture {
    /// Installs the scripted app (a copy of the Python interpreter) in `user`'s app root.
    /// - Returns: the interpreter copy to run it with.
    func installScriptedApp(for user: ThrowawayUser) throws -> String {
        guard let interpreter = ScriptedApp.interpreter else { throw FixtureError("no python3 to copy") }
        let root = "\(appsRoot)/\(user.name)"
        let app = "\(root)/\(ScriptedApp.appID)"
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        try copyProgram(interpreter, to: "\(app)/python3")
        let entry = "[Desktop Entry]\nType=Application\nName=Scripted\nExec=python3\nX-FamilyControls=true\n"
        try entry.write(toFile: "\(app)/\(ScriptedApp.appID).desktop", atomically: false, encoding: .utf8)
        try sh("chown -R \(user.name):\(user.name) '\(root)'").requireSuccess()
        return "\(app)/python3"
    }
}

import Foundation
import Testing
import TestSupport

/// Calls that change nothing cannot flood the audit trail: every kind of
/// request an app makes counts against its user's quota, and the same event
/// again is one row with a count, as syslog's "last message repeated".
@Suite(.serialized, .enabled(if: canRunGuard && ScriptedApp.interpreter != nil,
                             "needs root, useradd, python3, and `swift build` products"))
struct AuditFloodTests {
    /// COUNT `RevokeAuthorization` calls on one connection, each after the
    /// last one's end; says `revoked {outcome: count}`, where an outcome is
    /// "reply" or the error's name and message.
    static let revokes = #"""
        import json, socket, sys
        path, count = sys.argv[1], int(sys.argv[2])
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        call = json.dumps({'method': 'org.familycontrols.guard.RevokeAuthorization', 'more': True}).encode() + b'\0'
        buffer, counts = b'', {}
        for _ in range(count):
            s.sendall(call)
            while True:
                while b'\0' not in buffer:
                    chunk = s.recv(1 << 16)
                    if not chunk:
                        sys.exit('the Guard hung up')
                    buffer += chunk
                frame, buffer = buffer.split(b'\0', 1)
                reply = json.loads(frame)
                if not reply.get('continues'):
                    break
            key = reply['error'] + ': ' + reply.get('parameters', {}).get('message', '') if 'error' in reply else 'reply'
            counts[key] = counts.get(key, 0) + 1
        print('revoked', json.dumps(counts, sort_keys=True), file=sys.stderr, flush=True)
        """#

    @Test func fifteenHundredRevokesWithNothingApprovedLeaveAFewRowsAndAQuotaRefusal() async throws {
        try await withGuard { guardd in
            let interpreter = try guardd.installScriptedApp()
            try await guardd.waitUntilReconciled()
            let rowsBefore = try await guardd.auditRows().count
            let sizeBefore = try storeSize(guardd)

            let calls = 1_500
            let started = ContinuousClock.now
            let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: interpreter,
                                                                   ["-c", Self.revokes, guardd.socket, "\(calls)"]))
            defer { app.stop() }
            #expect(await app.waitForError(containing: "revoked ", timeout: .seconds(120)), "\(app.standardError)")
            let line = try #require(app.standardError.split(separator: "\n").first { $0.hasPrefix("revoked ") })
            let counts = try JSONDecoder().decode([String: Int].self, from: Data(line.dropFirst("revoked ".count).utf8))

            // The quota's burst went through (nothing was approved: no effect),
            // plus one call per 30 s the calls took (the quota earns one back
            // each RequestInterval; a loaded machine may take that long);
            // every later call was refused, saying so.
            let earned = Int((ContinuousClock.now - started) / .seconds(30))
            let replies = try #require(counts["reply"], "\(counts)")
            #expect(replies >= 10 && replies <= 10 + earned, "\(counts), \(earned) earned back")
            let burst = replies
            let refusals = counts.filter { $0.key != "reply" }
            #expect(refusals.values.reduce(0, +) == calls - burst, "\(counts)")
            #expect(refusals.keys.allSatisfy {
                $0.hasPrefix("org.familycontrols.guard.AuthorizationCanceled: Too many requests. Try again in ")
            }, "\(counts)")

            // A handful of rows: the no-effect revokes as one, and one refusal.
            let rows = try await guardd.auditRows()
            #expect(rows.count - rowsBefore <= 3 + 2 * (replies - 10), "\(rows.suffix(10))")
            let child = guardd.child.name, appID = ScriptedApp.appID
            #expect(rows.filter { $0 == "\(child) revoke \(child) \(appID) no effect" }.count == 1, "\(rows)")
            let refusedRows = rows.filter { $0 == "\(child) revoke \(child) \(appID) refused" }.count
            #expect(refusedRows >= 1 && refusedRows <= 1 + (replies - 10), "\(rows)")
            let growth = try storeSize(guardd) - sizeBefore
            #expect(growth < 512 << 10, "the store grew by \(growth) bytes")

            // `familyctl log` says how often, in its table and its JSON.
            let table = try await guardd.familyctl(["log", "--app", appID])
            #expect(table.status == 0, "\(table.standardError)")
            #expect(table.standardOutput.contains("not approved (repeated \(burst) times, the last at "), "\(table.standardOutput)")
            let json = try await guardd.familyctl(["log", "--app", appID, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
            let events = try #require(object?["events"] as? [[String: Any]])
            let repeated = try #require(events.first { $0["outcome"] as? String == "noEffect" }, "\(events)")
            #expect(repeated["count"] as? Int == burst)
            #expect(repeated["lastAt"] as? String != nil, "\(repeated)")
            // A call let through between refusals (a token earned back) starts a new refusal row.
            if replies == 10 {
                #expect(events.filter { $0["outcome"] as? String == "refused" }.allSatisfy { $0["count"] as? Int == 1 }, "\(events)")
            }
        }
    }

    /// `ROUNDS APP...`: in each round, runs every app's `python3` once, each
    /// asking `RequestAuthorization(member: child)` and ending at the reply;
    /// says `requested {outcome: count}`, where an outcome is "reply" or the
    /// error's name and message.
    static let rotatingRequests = #"""
        import json, subprocess, sys
        socket_path, rounds, apps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
        ask = (
            "import json, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "s.connect(sys.argv[1])\n"
            "s.sendall(json.dumps({'method': 'org.familycontrols.guard.RequestAuthorization', "
            "'parameters': {'member': 'child'}, 'more': True}).encode() + b'\\0')\n"
            "buffer = b''\n"
            "while b'\\0' not in buffer:\n"
            "    chunk = s.recv(1 << 16)\n"
            "    if not chunk: sys.exit('the Guard hung up')\n"
            "    buffer += chunk\n"
            "reply = json.loads(buffer.split(b'\\0', 1)[0])\n"
            "print(reply['error'] + ': ' + reply.get('parameters', {}).get('message', '') if 'error' in reply else 'reply')\n"
        )
        counts = {}
        for _ in range(rounds):
            for app in apps:
                done = subprocess.run([app + '/python3', '-c', ask, socket_path], capture_output=True, text=True)
                key = done.stdout.strip() or ('failed: ' + done.stderr.strip()[-200:])
                counts[key] = counts.get(key, 0) + 1
        print('requested', json.dumps(counts, sort_keys=True), file=sys.stderr, flush=True)
        """#

    /// A user who is no one's child, asking as a child from more app folders
    /// than the repeats are looked for among, each refused at once: every
    /// refusal counts against the user's quota, so past it the refusals are
    /// still given but a few rows are written, not one per call.
    @Test func refusedRequestsFromManyAppFoldersCountAgainstTheQuota() async throws {
        try await withGuard { guardd in
            guard let interpreter = ScriptedApp.interpreter else { throw FixtureError("no python3 to copy") }
            let user = guardd.adult
            let root = "\(guardd.appsRoot)/\(user.name)"
            // More folders than the Guard looks among for a repeat (the
            // user's latest 64 rows): no refusal is ever counted as one.
            let folders = (0..<70).map { "\(root)/org.example.Flood\($0)" }
            try FileManager.default.createDirectory(atPath: folders[0], withIntermediateDirectories: true)
            try copyProgram(interpreter, to: "\(folders[0])/python3")
            for (index, folder) in folders.enumerated() {
                let appID = "org.example.Flood\(index)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                if index > 0 { try FileManager.default.linkItem(atPath: "\(folders[0])/python3", toPath: "\(folder)/python3") }
                try "[Desktop Entry]\nType=Application\nName=Flood\nExec=python3\nX-FamilyControls=true\n"
                    .write(toFile: "\(folder)/\(appID).desktop", atomically: false, encoding: .utf8)
            }
            try await sh("chown -R \(user.name):\(user.name) '\(root)'").requireSuccess()
            try await guardd.waitUntilReconciled()
            let rowsBefore = try await guardd.auditRows().count

            let rounds = 3
            let started = Date()
            let app = try RunningApp(arguments: guardd.commandLine(as: user, executable: "\(folders[0])/python3",
                                                                   ["-c", Self.rotatingRequests, guardd.socket, "\(rounds)"] + folders))
            defer { app.stop() }
            #expect(await app.waitForError(containing: "requested ", timeout: .seconds(180)), "\(app.standardError)")
            let elapsed = Date().timeIntervalSince(started)
            let line = try #require(app.standardError.split(separator: "\n").first { $0.hasPrefix("requested ") })
            let counts = try JSONDecoder().decode([String: Int].self, from: Data(line.dropFirst("requested ".count).utf8))
            let calls = rounds * folders.count
            #expect(counts.values.reduce(0, +) == calls, "\(counts)")
            #expect(counts["reply"] == nil, "\(counts)")
            // Every call was told why, within the quota or past it.
            let notAChild = counts.filter {
                $0.key.hasPrefix("org.familycontrols.guard.InvalidAccountType: ")
                    && $0.key.contains("is not a child in the family configuration")
            }
            #expect(notAChild.values.reduce(0, +) == calls, "\(counts)")

            // A row for each refusal of the quota's burst and one saying the
            // rest go unrecorded, not one per call. The quota earns a place
            // back every 30 s: a slow run may record one more refusal, and say
            // again that the rest are not, for each place earned meanwhile.
            let burst = 10
            let earned = Int((elapsed / 30).rounded(.up))
            let rows = try await guardd.auditRows()
            let added = rows.dropFirst(rowsBefore).filter { $0.hasPrefix("\(user.name) request ") }
            #expect(added.count >= burst + 1 && added.count <= burst + 1 + 2 * earned,
                    "\(added.count) rows for \(calls) calls in \(Int(elapsed)) s: \(added.suffix(5))")
            #expect(added.allSatisfy { $0.hasSuffix(" refused") }, "\(added)")
            let log = try await guardd.familyctl(["log", "--user", user.name])
            #expect(log.standardOutput.contains("further refusals are not recorded for "), "\(log.standardOutput)")
        }
    }

    /// The store's database and write-ahead log together, in bytes.
    private func storeSize(_ guardd: GuardFixture) throws -> Int {
        let database = "\(guardd.stateDirectory)/familycontrols.db"
        return try [database, database + "-wal"].reduce(0) { total, path in
            guard FileManager.default.fileExists(atPath: path) else { return total }
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            return total + size
        }
    }
}

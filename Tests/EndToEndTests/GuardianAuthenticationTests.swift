import Foundation
import Testing
import TestSupport

/// Every verb that changes a child's protection authenticates the guardian
/// through PAM on their own terminal, as `approve` does; one authentication
/// covers the same terminal session for `GuardianTimeout=`, never another
/// session and never a restarted Guard. Real users, real PAM, the real Guard,
/// familyctl run as the guardian (not root).
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct GuardianAuthenticationTests {
    /// `familyctl ARGUMENTS --socket …` as one shell word list.
    private func familyctl(_ guardd: GuardFixture, _ arguments: [String]) -> String {
        ([productPath("familyctl")] + arguments + ["--socket", guardd.socket]).map { "'\($0)'" }.joined(separator: " ")
    }

    /// `script` run by `/bin/sh` as the guardian on a pseudo-terminal of its
    /// own: one terminal session, whose leader is the shell.
    private func onTerminal(_ guardd: GuardFixture, _ script: String,
                            steps: [(String, String)]) async throws -> TerminalSession.Outcome {
        try await TerminalSession.run(
            ["/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
             "/bin/sh", "-c", script], steps: steps)
    }

    /// familyctl run as `user` in a session with no terminal at all, and
    /// nothing on standard input.
    private func withoutTerminal(_ guardd: GuardFixture, _ arguments: [String],
                                 as user: ThrowawayUser? = nil, input: String = "") async throws -> ProcessResult {
        let who = user ?? guardd.guardian
        return try await run("/usr/bin/setsid", ["-w", "/usr/bin/setpriv", "--reuid=\(who.uid)", "--regid=\(who.gid)",
                                                 "--clear-groups", productPath("familyctl")] + arguments + ["--socket", guardd.socket],
                             input: input)
    }

    /// The system's Python, which every user may run (a root-only pyenv may come first in root's PATH).
    static let systemPython = "/usr/bin/python3"

    private func prompts(in outcome: TerminalSession.Outcome) -> Int {
        outcome.output.components(separatedBy: "Password:").count - 1
    }

    @Test func revokeSetAndDenyWithoutAuthenticationAreRefusedAndTheLockHolds() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let locked = try TreeSnapshot.take(guardd.appDirectory)
            #expect(locked.unlockedItems().isEmpty)
            let user = guardd.child.name, app = GuardFixture.appID
            for arguments in [["revoke", "--user", user, "--app", app], ["set", "--user", user, "--app", app, "denied"]] {
                let refused = try await withoutTerminal(guardd, arguments)
                #expect(refused.status == 4, "\(arguments[0]): \(refused.standardError)")
                #expect(refused.standardError.contains("\(guardd.guardian.name) must authenticate before changing \(user)'s "
                    + "protection, and there is no terminal to ask on"), "\(refused.standardError)")
                // --stdin with nothing on it: asked, and no answer.
                let unanswered = try await withoutTerminal(guardd, arguments + ["--stdin"])
                #expect(unanswered.status != 0, "\(arguments[0]) --stdin: \(unanswered.standardError)")
                #expect(try await guardd.storedStatus() == "approved")
            }
            let graduate = try await withoutTerminal(guardd, ["graduate", user])
            #expect(graduate.status == 4, "graduating stays root's: \(graduate.standardError)")

            // A Varlink client of the guardian's that does not call with more cannot be asked either.
            let raw = try await run("/usr/bin/setsid", ["-w", "/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)",
                                                        "--regid=\(guardd.guardian.gid)", "--clear-groups", Self.systemPython, "-c", """
                import json, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(json.dumps({'method': 'org.familycontrols.guard.Revoke',
                                      'parameters': {'user': sys.argv[2], 'app': sys.argv[3]}}).encode() + b'\\0')
                reply = b''
                while not reply.endswith(b'\\0'):
                    chunk = s.recv(65536)
                    if not chunk: break
                    reply += chunk
                print(reply.rstrip(b'\\0').decode())
                """, guardd.socket, user, app])
            #expect(raw.standardOutput.contains("org.familycontrols.guard.PermissionDenied"), "\(raw.standardOutput)")
            #expect(raw.standardOutput.contains("must authenticate"), "\(raw.standardOutput)")

            #expect(try await guardd.storedStatus() == "approved")
            #expect(try await guardd.lock(of: app) == "locked")
            #expect(try TreeSnapshot.take(guardd.appDirectory) == locked, "an unauthenticated verb lifted the lock")
            let audit = try await guardd.auditRows()
            #expect(audit.contains { $0.contains("\(guardd.guardian.name) revoke \(user) \(app) refused") }, "\(audit)")

            // Deny, too: a request waits and nobody authenticated.
            try await guardd.familyctl(["revoke", "--user", user, "--app", app]).requireSuccess()
            let pending = try guardd.startApp(executable: guardd.appExecutable)
            defer { pending.stop() }
            let id = try await pending.waitForPendingRequest()
            let deny = try await withoutTerminal(guardd, ["deny", String(id)])
            #expect(deny.status == 2, "\(deny.standardError)")
            #expect(deny.standardError.contains("no terminal to authenticate on"))
            let denyEmpty = try await withoutTerminal(guardd, ["deny", String(id), "--stdin"])
            #expect(denyEmpty.status != 0)
            #expect(pending.process.isRunning, "the request still waits")
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test func withThePasswordOneAuthenticationCoversLaterVerbsOfTheSameTerminalSessionOnly() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let user = guardd.child.name, app = GuardFixture.appID
            let password = guardd.guardian.password ?? ""
            let first = try await onTerminal(guardd, familyctl(guardd, ["revoke", "--user", user, "--app", app]) + " && "
                + familyctl(guardd, ["set", "--user", user, "--app", app, "approved"]), steps: [("Password:", password)])
            #expect(first.status == 0, "\(first) \(first.output)")
            #expect(prompts(in: first) == 1, "the second verb of the same session asked again")
            #expect(first.echoAtPrompts == [false])
            #expect(first.showed("familyctl: revoked \(app) for \(user)"))
            #expect(first.showed("familyctl: \(app) is approved for \(user); its folder is locked, so \(user) cannot remove or change it"))
            // What is about to change is shown before the password is asked.
            let shown = try #require(first.output.range(of: "Revoke \(app) for \(user): its folder will no longer be protected"))
            let asked = try #require(first.output.range(of: "Password:"))
            #expect(shown.lowerBound < asked.lowerBound)
            #expect(try await guardd.lock(of: app) == "locked")

            // Another terminal session of the same guardian, within the timeout: asked.
            let second = try await onTerminal(guardd, familyctl(guardd, ["set", "--user", user, "--app", app, "denied"]),
                                              steps: [("Password:", password)])
            #expect(second.status == 0, "\(second) \(second.output)")
            #expect(prompts(in: second) == 1, "another session rode on the first one's authentication")
            #expect(try await guardd.storedStatus() == "denied")
            #expect(!guardd.log.contains(password), "the guardian's password reached the log")
        }
    }

    @Test func aZeroGuardianTimeoutAsksForEveryVerb() async throws {
        try await withGuard(extraConfiguration: "GuardianTimeout=0") { guardd in
            try await guardd.requestApproved().requireSuccess()
            let user = guardd.child.name, app = GuardFixture.appID
            let password = guardd.guardian.password ?? ""
            let outcome = try await onTerminal(guardd, familyctl(guardd, ["revoke", "--user", user, "--app", app]) + " && "
                + familyctl(guardd, ["set", "--user", user, "--app", app, "approved"]),
                steps: [("Password:", password), ("Password:", password)])
            #expect(outcome.status == 0, "\(outcome) \(outcome.output)")
            #expect(prompts(in: outcome) == 2)
            #expect(try await guardd.lock(of: app) == "locked")
        }
    }

    @Test func aRestartedGuardAsksAgainInTheSameSession() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let user = guardd.child.name, app = GuardFixture.appID
            let password = guardd.guardian.password ?? ""
            let flag = "/tmp/fc-restarted-\(UUID().uuidString)"
            let done = "/tmp/fc-revoked-\(UUID().uuidString)"
            defer {
                try? FileManager.default.removeItem(atPath: flag)
                try? FileManager.default.removeItem(atPath: done)
            }
            // The first verb has finished (its reply read) before the Guard is
            // restarted: `done` appears only once familyctl has exited 0.
            async let session = onTerminal(guardd, familyctl(guardd, ["revoke", "--user", user, "--app", app])
                + " && : > '\(done)' && while [ ! -e '\(flag)' ]; do sleep 0.1; done && "
                + familyctl(guardd, ["set", "--user", user, "--app", app, "approved"]),
                steps: [("Password:", password), ("Password:", password)])
            var revoked = false
            for _ in 0..<200 where !revoked {
                if FileManager.default.fileExists(atPath: done) {
                    revoked = (try? await guardd.storedStatus()) == "notDetermined"
                }
                if !revoked { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(revoked, "the first verb never went through")
            guardd.stop()
            try await guardd.start()
            #expect(FileManager.default.createFile(atPath: flag, contents: nil))
            let outcome = try await session
            #expect(outcome.status == 0, "\(outcome) \(outcome.output)")
            #expect(prompts(in: outcome) == 2, "an authentication outlived the Guard that checked it")
            #expect(try await guardd.lock(of: app) == "locked")
        }
    }

    @Test func approveShowsTheRequestBeforeAskingAndRequestNumbersOutliveARestart() async throws {
        try await withGuard { guardd in
            let app = try guardd.startApp(executable: guardd.appExecutable)
            let id = try await app.waitForPendingRequest()
            app.stop()
            guardd.stop()
            try await guardd.start()
            let again = try guardd.startApp(executable: guardd.appExecutable)
            defer { again.stop() }
            let next = try await again.waitForPendingRequest()
            #expect(next > id, "request \(id) before the restart and \(next) after it")

            let password = guardd.guardian.password ?? ""
            let terminal = try await onTerminal(guardd, familyctl(guardd, ["approve", String(next)]),
                                                steps: [("Password:", password)])
            #expect(terminal.status == 0, "\(terminal) \(terminal.output)")
            let summary = "Request \(next) (approval): “FamilyControls Demo” (\(GuardFixture.appID)) for \(guardd.child.name), "
                + "folder \(guardd.appDirectory), asked "
            let shown = try #require(terminal.output.range(of: summary), "\(terminal.output)")
            let asked = try #require(terminal.output.range(of: "Password:"))
            #expect(shown.lowerBound < asked.lowerBound)
            #expect(await again.exitStatus() == 0)
        }
    }

    @Test func theRequestShownBeforeThePasswordHasTheChildsControlCharactersEscaped() async throws {
        try await withGuard { guardd in
            try """
                [Desktop Entry]
                Type=Application
                Name=Demo\u{1b}]0;pwned\u{07}\u{1b}[2J \u{202e}ppa
                Exec=familycontrols-demo
                X-FamilyControls=true
                """.write(toFile: "\(guardd.appDirectory)/\(GuardFixture.appID).desktop", atomically: false, encoding: .utf8)
            try await sh("chown -R \(guardd.child.name) '\(guardd.appDirectory)'").requireSuccess()
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let decided = try await guardd.familyctlAsGuardian(["deny", String(id), "--stdin"],
                                                               input: "\(guardd.guardian.password ?? "")\n")
            #expect(decided.status == 0, "\(decided.standardError)")
            #expect(decided.standardError.contains("Request \(id) (approval): “Demo\\x1B]0;pwned\\x07\\x1B[2J \\u{202E}ppa” "
                + "(\(GuardFixture.appID)) for \(guardd.child.name)"), "\(decided.standardError)")
            #expect(!decided.standardError.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x202e },
                    "control characters reached the guardian's terminal raw")
        }
    }

    @Test func setTellsSomeoneWhoMayNotChangeAUserNothingOfWhetherTheUserExists() async throws {
        try await withGuard { guardd in
            for user in ["fcnosuchuser", guardd.child.name] {
                let probe = try await withoutTerminal(guardd, ["set", "--user", user, "--app", GuardFixture.appID, "approved"],
                                                      as: guardd.adult)
                #expect(probe.status == 4, "\(user): \(probe.standardError)")
                #expect(probe.standardError == "familyctl: only root or a guardian of \(user) may change \(user)'s authorizations\n")
            }
        }
    }
}

/// `familyctl` speaks only to a Guard that runs as root: a fake behind
/// `FAMILYCONTROLS_SOCKET`, run by the child, receives nothing, no password
/// least of all.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct FamilyCtlImpostorTests {
    private let systemPython = GuardianAuthenticationTests.systemPython

    @Test func aFakeGuardRunByTheChildReceivesNothingFromTheGuardiansFamilyctl() async throws {
        try await withGuard { guardd in
            let folder = "/tmp/fc-fake-\(UUID().uuidString.prefix(8))"
            try await sh("install -d -m 0755 -o \(guardd.child.uid) '\(folder)'").requireSuccess()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let socket = "\(folder)/guard.sock", received = "\(folder)/received"
            let fake = Process()
            fake.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            fake.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups", systemPython, "-c", """
                import os, socket, sys
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(sys.argv[1])
                os.chmod(sys.argv[1], 0o777)
                server.listen(8)
                open(sys.argv[1] + '.ready', 'w').close()
                while True:
                    connection, _ = server.accept()
                    connection.settimeout(3)
                    data = b''
                    try:
                        while True:
                            chunk = connection.recv(65536)
                            if not chunk: break
                            data += chunk
                    except OSError:
                        pass
                    with open(sys.argv[2], 'a') as log:
                        log.write('%d\\n' % len(data))
                    connection.close()
                """, socket, received]
            try fake.run()
            defer { kill(fake) }
            // Ready once it listens with its socket open to everyone, not when the socket appears.
            try await waitUntil(timeout: 60) { FileManager.default.fileExists(atPath: socket + ".ready") }

            let password = "\(guardd.guardian.password ?? "")\n"
            let verbs: [([String], String)] = [
                (["approve", "1", "--stdin"], password),
                (["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID, "--stdin"], password),
                (["status"], ""),
            ]
            for (arguments, input) in verbs {
                let result = try await run("/usr/bin/setsid", ["-w", "/usr/bin/env", "FAMILYCONTROLS_SOCKET=\(socket)",
                                                               "/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)",
                                                               "--regid=\(guardd.guardian.gid)", "--clear-groups",
                                                               productPath("familyctl")] + arguments, input: input)
                #expect(result.status == 5, "\(arguments[0]): \(result.standardError)")
                #expect(result.standardError == "familyctl: the service at \(socket) runs as uid \(guardd.child.uid), not as "
                    + "root: it is not the Guard, so nothing was sent to it\n", "\(arguments[0])")
            }
            // The fake logs a connection once it has read it to its end; on a
            // loaded machine that may come well after familyctl has exited.
            let logged = { ((try? String(contentsOfFile: received, encoding: .utf8)) ?? "").split(separator: "\n") }
            do {
                try await waitUntil(timeout: 60) { logged().count >= verbs.count }
            } catch {
                Issue.record("the fake Guard logged \(logged()) for \(verbs.count) connections")
                return
            }
            #expect(logged() == Array(repeating: "0", count: verbs.count), "the fake Guard received bytes: \(logged())")
        }
    }
}

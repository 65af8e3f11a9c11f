import Foundation
import Testing
import TestSupport
import Varlink

/// `pam_familycontrols.so`, built by `Config/build-pam-module.sh` as the
/// package builds it, in a real `runuser -l` session: the real util-linux
/// runuser, the real libpam loading the module, with its PAM configuration
/// redirected by pam_wrapper (`PAM_WRAPPER_SERVICE_DIR`) so the machine's
/// `/etc/pam.d` is never touched; the real Guard on its real socket.
private let pamWrapper = pamWrapperLibrary

@Suite(.serialized, .enabled(if: canManageUsers && FileManager.default.fileExists(atPath: pamWrapper),
                             "needs root and libpam-wrapper"))
struct PAMSessionModuleTests {

    /// `runuser -l USER -c COMMAND` with the module in `directory` telling `socket`.
    private func services(in directory: String, socket: String, options: String = "") async throws -> TestLoginSessions {
        try await TestLoginSessions.make(in: directory, socket: socket, options: options)
    }

    private func runuser(_ user: String, _ command: String, services: TestLoginSessions) throws -> RunningApp {
        try services.login(user, command)
    }

    private func sessions(_ guardd: GuardFixture) async throws -> [JSONObject] {
        try await guardd.call("ListSessions")["sessions"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }

    @Test func aRunuserSessionIsToldToTheGuardWhileItLastsAndClosedWhenItEnds() async throws {
        try await withGuard { guardd in
            let services = try await services(in: guardd.directory, socket: guardd.socket)
            let session = try runuser(guardd.child.name, "echo started; read line", services: services)
            defer { session.stop() }
            #expect(await eventually { session.standardOutput.contains("started") }, "\(session.standardError)")
            let open = try await sessions(guardd)
            #expect(open.count == 1, "\(open)\n\(guardd.log)")
            let first = try #require(open.first)
            #expect(first["user"]?.stringValue == guardd.child.name)
            #expect(first["uid"]?.intValue == Int64(guardd.child.uid))
            #expect(first["service"]?.stringValue == "runuser-l")
            // The leader is the runuser process itself, the parent of the shell.
            #expect(first["leader"]?.intValue == Int64(session.process.processIdentifier), "\(first)")
            #expect(guardd.log.contains("session: \(guardd.child.name) opened (service runuser-l"), "\(guardd.log)")

            session.write("done\n")
            #expect(await session.exitStatus() == 0, "\(session.standardError)")
            #expect(try await sessions(guardd).isEmpty)
            #expect(guardd.log.contains("session: \(guardd.child.name) closed (service runuser-l"), "\(guardd.log)")
        }
    }

    @Test func aSessionWhoseLeaderIsKilledEndsWithoutAClose() async throws {
        try await withGuard { guardd in
            let services = try await services(in: guardd.directory, socket: guardd.socket)
            let session = try runuser(guardd.child.name, "echo started; read line", services: services)
            defer { session.stop() }
            #expect(await eventually { session.standardOutput.contains("started") }, "\(session.standardError)")
            #expect(try await sessions(guardd).count == 1)
            kill(session.process.processIdentifier, SIGKILL)
            session.endInput() // the shell runuser left behind reads its end of input and exits
            var open = try await sessions(guardd)
            for _ in 0..<100 where !open.isEmpty {
                try await Task.sleep(for: .milliseconds(50))
                open = try await sessions(guardd)
            }
            #expect(open.isEmpty, "\(open)\n\(guardd.log)")
            // Whichever of the Guard's threads finds the session ended logs it,
            // just after taking it off the list this test reads.
            #expect(await eventually { guardd.log.contains("session: \(guardd.child.name) ended: its leader is gone") },
                    "\(guardd.log)")
        }
    }

    /// The login must never wait on the Guard: no socket, a socket nobody
    /// accepts on, and one that accepts but never answers.
    @Test func withNoGuardOrAGuardThatNeverAnswersTheLoginStillSucceedsAtOnce() async throws {
        try await withThrowawayUser(prefix: "s") { user in
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            // A listener that accepts nothing (a full backlog is the kernel's, not ours).
            let silent = "\(directory)/silent.socket"
            let listener = try RunningApp(arguments: ["/usr/bin/python3", "-c", """
                import socket, sys, time
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
                print("listening", flush=True)
                conns = []
                while True:
                    c, _ = s.accept(); conns.append(c)
                """, silent])
            defer {
                // SIGKILL: children of the test run inherit its blocked SIGTERM.
                kill(listener.process.processIdentifier, SIGKILL)
                listener.stop()
            }
            #expect(await eventually { listener.standardOutput.contains("listening") })
            for socket in ["\(directory)/none.socket", silent] {
                let services = try await services(in: "\(directory)/\(socket.hashValue & 0xffff)", socket: socket)
                let started = ContinuousClock.now
                let session = try runuser(user.name, "echo in", services: services)
                defer { session.stop() }
                #expect(await session.exitStatus() == 0, "\(socket): \(session.standardError)")
                #expect(session.standardOutput == "in\n")
                // The module waits at most its 250 ms per call (open and close); a hung login would take forever.
                #expect(ContinuousClock.now - started < .seconds(20), "\(socket)")
            }
        }
    }

    @Test func onlyRootMayTellTheGuardOfASession() async throws {
        try await withGuard { guardd in
            let script = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            call = {"method": "org.familycontrols.guard.OpenSession",
                    "parameters": {"token": "0" * 32, "user": sys.argv[2], "service": "login"}}
            s.sendall(json.dumps(call).encode() + b"\\0")
            print(s.recv(4096).rstrip(b"\\0").decode())
            """
            let result = try await run("/usr/bin/setpriv", ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)",
                                                            "--clear-groups", "/usr/bin/python3", "-c", script,
                                                            guardd.socket, guardd.child.name]).requireSuccess()
            #expect(result.standardOutput.contains("org.familycontrols.guard.PermissionDenied"), "\(result.standardOutput)")
            #expect(try await sessions(guardd).isEmpty)
            // A malformed token is refused even from root.
            await #expect(throws: (any Error).self) {
                _ = try await guardd.call("OpenSession", ["token": .string("not-hex"), "user": .string(guardd.child.name),
                                                          "service": .string("login")])
            }
        }
    }
}

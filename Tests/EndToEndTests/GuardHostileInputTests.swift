import Foundation
import SystemKit
import Testing
import TestSupport
import Varlink
import VarlinkClientKit

/// Hostile bytes on the socket: each gets a Varlink error or a closed
/// connection; the Guard stays up and keeps serving everyone else.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct GuardHostileInputTests {
    /// Connects, writes `bytes`, and returns what came back before the Guard closed
    /// the connection or went quiet.
    private func exchange(_ socket: String, _ bytes: [UInt8]) throws -> (reply: String, closed: Bool) {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socket.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw FixtureError("connect failed: \(errno)") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the Guard may close on us mid-write: that is an acceptable answer
            offset += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&pfd, 1, 3000) > 0 {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[0..<n]
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    private func stillServes(_ guardd: GuardFixture) throws {
        let client = try VarlinkClient(path: guardd.socket, connectTimeout: .seconds(2), replyTimeout: .seconds(5))
        defer { client.close() }
        let info = try client.call("org.varlink.service.GetInfo")
        #expect(info["product"]?.stringValue == "familycontrolsd")
        #expect(guardd.process?.isRunning == true)
    }

    @Test func garbageInvalidJSONAndWrongShapesAreRefused() async throws {
        try await withGuard { guardd in
            let cases: [(String, [UInt8])] = [
                ("garbage", [0xff, 0xfe, 0x00]),
                ("invalid JSON", Array("{\"method\": ".utf8) + [0]),
                ("not an object", Array("[1,2,3]".utf8) + [0]),
                ("method not a string", Array("{\"method\": 42}".utf8) + [0]),
            ]
            for (label, bytes) in cases {
                let (reply, closed) = try exchange(guardd.socket, bytes)
                #expect(closed, "\(label): the connection should be closed")
                #expect(reply.isEmpty || reply.contains("\"error\""), "\(label): \(reply)")
                try stillServes(guardd)
            }
        }
    }

    @Test func unknownMethodsAndParametersGetVarlinkErrors() async throws {
        try await withGuard { guardd in
            let client = try VarlinkClient(path: guardd.socket, connectTimeout: .seconds(2), replyTimeout: .seconds(5))
            defer { client.close() }
            func error(_ method: String, _ parameters: JSONObject = [:]) -> String? {
                do {
                    _ = try client.call(method, parameters: parameters)
                    return nil
                } catch let VarlinkClientError.remote(remote) {
                    return remote.name
                } catch {
                    return "\(error)"
                }
            }
            #expect(error("org.familycontrols.guard.Explode") == "org.varlink.service.MethodNotFound")
            #expect(error("com.example.nothing.Method") == "org.varlink.service.InterfaceNotFound")
            // Parameters that are not what the interface says are refused
            // before any handler runs, as sd-varlink refuses them.
            let invalid = "org.varlink.service.InvalidParameter"
            #expect(error("org.familycontrols.guard.SetStatus", ["user": .int(3), "app": .string("x"), "status": .string("approved")])
                    == invalid)
            // Not a Status of the interface at all; nor is approvedWithDataAccess, which grants no data access here.
            for status in ["maybe", "approvedWithDataAccess"] {
                #expect(error("org.familycontrols.guard.SetStatus", ["user": .string(guardd.child.name), "app": .string(GuardFixture.appID),
                                                                     "status": .string(status)])
                        == invalid, "\(status)")
            }
            // A Status the Guard never sets this way: notDetermined is a revoke.
            #expect(error("org.familycontrols.guard.SetStatus", ["user": .string(guardd.child.name), "app": .string(GuardFixture.appID),
                                                                 "status": .string("notDetermined")])
                    == "org.familycontrols.guard.InvalidArgument")
            #expect(error("org.familycontrols.guard.ListAuthorizations", ["user": .bool(true)]) == invalid)
            #expect(error("org.familycontrols.guard.ListAuthorizations", ["uid": .int(0)]) == invalid)
            #expect(error("org.familycontrols.guard.RequestAuthorization", ["member": .string("child")])
                    == "org.varlink.service.ExpectedMore")
            #expect(error("org.familycontrols.guard.VerifyLocks", ["repair": .string("yes")]) == invalid)
            try stillServes(guardd)
        }
    }

    @Test func tenMebibytesWithoutANULAreCutOff() async throws {
        try await withGuard { guardd in
            let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 10 << 20)
            let (_, closed) = try exchange(guardd.socket, Array("{\"method\":\"".utf8) + huge)
            #expect(closed)
            try stillServes(guardd)
        }
    }

    @Test func thousandIdleConnectionsDoNotStopOthers() async throws {
        try await withGuard { guardd in
            var idle: [VarlinkClient] = []
            for _ in 0..<1000 {
                idle.append(try VarlinkClient(path: guardd.socket, connectTimeout: .seconds(5)))
            }
            try stillServes(guardd)
            let approved = try await guardd.requestApproved()
            #expect(approved.status == 0, "\(approved.standardError)")
            for client in idle { client.close() }
            try stillServes(guardd)
        }
    }

    /// Opens connections one by one and asks each for `GetInfo`; says how
    /// many were answered, then holds them all until standard input closes.
    static let connectionHog = #"""
        import socket, sys
        served, held = 0, []
        for _ in range(int(sys.argv[2])):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            held.append(s)
            try:
                s.connect(sys.argv[1])
                s.sendall(b'{"method":"org.varlink.service.GetInfo"}\0')
                reply = b''
                while not reply.endswith(b'\0'):
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
                served += reply.endswith(b'\0')
            except OSError:
                pass
        print('served', served, file=sys.stderr, flush=True)
        sys.stdin.read()
        """#

    @Test func aChildHoldingManyConnectionsCrowdsOutNoOneElse() async throws {
        try await withGuard { guardd in
            let limit = 64
            let hog = try RunningApp(arguments: [
                "/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                "/usr/bin/python3", "-c", Self.connectionHog, guardd.socket, "\(limit + 20)",
            ])
            defer { hog.stop() }
            #expect(await hog.waitForError(containing: "served "), "\(hog.standardError)")
            #expect(hog.standardError == "served \(limit)\n")
            #expect(guardd.log.contains("uid \(guardd.child.uid) holds \(limit) connections, its limit; refusing more from it"))

            // Other users and root are served meanwhile.
            let other = try await guardd.app(["status"], as: guardd.adult)
            #expect(other.standardOutput == "status: notDetermined\n", "\(other.standardError)")
            try stillServes(guardd)

            // Once the child lets go, it is served again.
            hog.endInput()
            _ = await hog.exitStatus()
            var status = ProcessResult(status: -1, standardOutput: "", standardError: "")
            for _ in 0..<50 where status.standardOutput != "status: notDetermined\n" {
                status = try await guardd.app(["status"])
                if status.standardOutput != "status: notDetermined\n" { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(status.standardOutput == "status: notDetermined\n", "\(status.standardError)")
        }
    }

    @Test func clientThatHangsUpMidConversationIsForgotten() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            // A raw client that starts a request as root (not an app) is refused;
            // the demo hanging up at the password prompt is the real case.
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            app.write("y\n")
            #expect(await app.waitForError(containing: "Parent or guardian's user name"), "\(app.standardError)")
            app.process.terminate()  // hang up while the Guard waits for the guardian's name
            app.process.waitUntilExit()
            try stillServes(guardd)
            // The next request is not blocked behind the abandoned one.
            let next = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            #expect(next.status == 0)
            #expect(try await guardd.auditRows().contains { $0.contains(" cancel ") })
        }
    }
}

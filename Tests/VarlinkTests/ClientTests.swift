import Foundation
import Synchronization
import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

@Suite("Client")
struct ClientTests {
    @Test func aMissingSocketIsReportedAsSuch() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/nothing-here"
            #expect(throws: VarlinkClientError.noSuchSocket(path)) { try VarlinkClient(path: path) }
            #expect(throws: VarlinkClientError.noSuchSocket(path + "/deeper")) { try VarlinkClient(path: path + "/deeper") }
        }
    }

    @Test func aSocketNobodyListensOnIsRefused() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/stale"
            let descriptor = try makeStaleSocket(at: path)
            defer { close(descriptor) }
            #expect(throws: VarlinkClientError.connectionRefused(path)) { try VarlinkClient(path: path) }
        }
    }

    @Test func anOverlongPathIsRejectedBeforeConnecting() {
        let path = "/tmp/" + String(repeating: "y", count: 120)
        #expect(throws: VarlinkClientError.invalidSocketPath(path)) { try VarlinkClient(path: path) }
    }

    // Root bypasses file permissions, so only an unprivileged run can reach EACCES.
    @Test(.enabled(if: getuid() != 0, "root is never denied a socket by its mode"))
    func aSocketWithoutWritePermissionIsDenied() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/private"
            let server = try VarlinkServer(listeningOn: path, mode: 0o000, configuration: .testing(), service: try TestService())
            defer { server.shutdown() }
            #expect(throws: VarlinkClientError.permissionDenied(path)) { try VarlinkClient(path: path) }
        }
    }

    @Test func connectTimesOutWhileTheAcceptQueueIsFull() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/full"
            // Backlog 0 holds one pending connection; nobody ever accepts.
            let descriptor = try makeListeningSocket(at: path, backlog: 0)
            defer { close(descriptor) }
            var queued: [VarlinkClient] = []
            var failure: VarlinkClientError?
            let start = ContinuousClock.now
            for _ in 0..<4 where failure == nil {
                do throws(VarlinkClientError) {
                    queued.append(try VarlinkClient(path: path, connectTimeout: .milliseconds(200)))
                } catch {
                    failure = error
                }
            }
            #expect(failure == .connectTimedOut(path))
            #expect(ContinuousClock.now - start >= .milliseconds(190))
        }
    }

    @Test func aCallWithoutAReplyTimesOutAndClosesTheClient() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let start = ContinuousClock.now
            #expect(throws: VarlinkClientError.timedOut) {
                try client.call("org.example.test.Hang", timeout: .milliseconds(150))
            }
            #expect(ContinuousClock.now - start >= .milliseconds(140))
            #expect(client.isClosed)
            #expect(throws: VarlinkClientError.timedOut) { try client.call("org.example.test.Echo") }
        }
    }

    /// The first read of a reply waits in `recv` itself, bounded by the
    /// socket's receive timeout (the client's reply timeout): it still ends
    /// the call at that timeout, not later and not sooner.
    @Test func theReplyTimeoutEndsACallThatGetsNoReply() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path, replyTimeout: .milliseconds(200))
            let start = ContinuousClock.now
            #expect(throws: VarlinkClientError.timedOut) { try client.call("org.example.test.Hang") }
            let waited = ContinuousClock.now - start
            #expect(waited >= .milliseconds(190) && waited < .seconds(3), "\(waited)")
        }
    }

    /// A wait longer than the reply timeout outlasts the socket's receive timeout.
    @Test func aLongerWaitThanTheReplyTimeoutGetsALateReply() throws {
        try withServer { _, path, service in
            let client = try VarlinkClient(path: path, replyTimeout: .milliseconds(100))
            Thread.detachNewThread {
                // Answered 400 ms after it is held: four of the client's reply timeouts.
                while service.parkedCount() == 0 { usleep(5_000) }
                usleep(400_000)
                service.releaseParked()
            }
            let start = ContinuousClock.now
            let reply = try client.call("org.example.test.Park", parameters: ["index": 7], timeout: .seconds(5))
            #expect(reply == ["index": 7])
            #expect(ContinuousClock.now - start >= .milliseconds(390))
        }
    }

    @Test func aReceiveTimeoutLosesNothing() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            try client.startStreaming("org.example.test.Converse", parameters: ["question": "?"])
            #expect(try client.receiveReply(timeout: .seconds(5)).continues)
            #expect(throws: VarlinkClientError.timedOut) { try client.receiveReply(timeout: .milliseconds(50)) }
            try client.sendOneway("org.example.test.Answer", parameters: ["text": "late"])
            #expect(try client.receiveReply(timeout: .seconds(5)).parameters == ["answer": "late"])
        }
    }

    @Test func anotherThreadCanInterruptABlockedWait() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let interrupter = client.interrupter
            Thread.detachNewThread {
                usleep(100_000)
                interrupter.interrupt()
            }
            #expect(throws: VarlinkClientError.interrupted) { try client.call("org.example.test.Hang") }
            #expect(interrupter.wasInterrupted)
        }
    }

    @Test func invalidCallsAreRefusedBeforeSending() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            #expect(throws: VarlinkClientError.invalidCall(.invalidMethodName("Echo"))) { try client.call("Echo") }
            #expect(throws: VarlinkClientError.invalidCall(.onewayWithMore)) {
                try client.send(VarlinkCall(method: "org.example.test.Echo", oneway: true, more: true))
            }
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "ok"]) == ["value": "ok"])
        }
    }

    @Test func aClosedClientSaysSo() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            client.close()
            client.close()
            #expect(client.isClosed)
            #expect(throws: VarlinkClientError.clientClosed) { try client.call("org.example.test.Echo") }
        }
    }

    @Test func aMalformedReplyIsRejected() throws {
        var pair: [CInt] = [0, 0]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let client = VarlinkClient(connectedSocket: .init(taking: pair[0]), label: "socketpair", replyTimeout: .seconds(5))
        let reply = Array(#"{"parameters":[]}"#.utf8) + [0]
        #expect(write(pair[1], reply, reply.count) == reply.count)
        #expect(throws: VarlinkClientError.invalidReply(.wrongFieldType("parameters", expected: "an object"))) {
            try client.receiveReply()
        }
        #expect(client.isClosed)
    }

    @Test func anOversizedReplyIsRejected() throws {
        var pair: [CInt] = [0, 0]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let client = VarlinkClient(
            connectedSocket: .init(taking: pair[0]), label: "socketpair", replyTimeout: .seconds(5), maximumFrameSize: 100
        )
        let reply = [UInt8](repeating: 0x20, count: 200)
        #expect(write(pair[1], reply, reply.count) == reply.count)
        #expect(throws: VarlinkClientError.replyTooLarge(limit: 100)) { try client.receiveReply() }
    }

    @Test func continuesOnAPlainCallIsAProtocolViolation() throws {
        var pair: [CInt] = [0, 0]
        #expect(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        let client = VarlinkClient(connectedSocket: .init(taking: pair[0]), label: "socketpair", replyTimeout: .seconds(5))
        let reply = Array(#"{"parameters":{},"continues":true}"#.utf8) + [0]
        #expect(write(pair[1], reply, reply.count) == reply.count)
        #expect(performing: { try client.call("org.example.test.Echo") }, throws: { error in
            if case .protocolViolation = error as? VarlinkClientError { return true }
            return false
        })
    }

    @Test func errorsDescribeThemselves() {
        #expect(VarlinkClientError.noSuchSocket("/run/x").description == "no Varlink service at /run/x: the socket does not exist")
        #expect(VarlinkClientError.remote(.methodNotFound("a.b.C")).description
            == #"Varlink error reply: org.varlink.service.MethodNotFound {"method":"a.b.C"}"#)
        #expect(VarlinkServerError.addressInUse("/run/x").description.contains("already exists"))
    }
}

import Foundation
import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

/// A connection's handed-on calls are bounded: at the limit the server stops
/// reading it, keeps what it read, and goes on once calls finish.
@Suite("Server: pending calls per connection")
struct ServerBackpressureTests {
    /// `count` Park calls, indexes 0 ..< count, as one run of frames.
    private func parkFrames(_ count: Int, oneway: Bool = false) -> [UInt8] {
        (0..<count).flatMap { index in
            VarlinkCall(method: "org.example.test.Park", parameters: ["index": .int(Int64(index))], oneway: oneway).encoded()
        }
    }

    /// Sends `bytes` on `descriptor` from a thread of its own: the server stops
    /// reading, so a large send blocks until calls are released.
    private func sendInBackground(_ bytes: [UInt8], on descriptor: CInt) {
        Thread.detachNewThread {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes {
                    Foundation.send(descriptor, $0.baseAddress! + offset, bytes.count - offset, CInt(MSG_NOSIGNAL))
                }
                if sent < 0, errno == EINTR { continue }
                if sent <= 0 { return }
                offset += sent
            }
        }
    }

    /// Releases parked calls as they come until `count` were released.
    private func releaseAll(_ count: Int, of service: TestService, reading raw: RawConnection?) -> [String] {
        var released = 0
        var replies: [String] = []
        while released < count, eventually(timeout: .seconds(10), { service.parkedCount() > 0 }) {
            let batch = service.releaseParked()
            released += batch
            if let raw { replies += raw.readFrames(batch) }
        }
        return replies
    }

    @Test func aConnectionAtItsLimitIsNotReadUntilCallsFinishAndNoCallIsLost() throws {
        try withServer(configuration: .testing(maximumPendingCalls: 8)) { _, path, service in
            let raw = try RawConnection(path: path)
            // More than one read buffer's worth, so frames straddle reads.
            let calls = 3000
            sendInBackground(parkFrames(calls), on: raw.descriptor)
            #expect(eventually { service.parkedCount() == 8 })

            // Others are served meanwhile, and the loop still holds the rest back.
            let other = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try other.call("org.example.test.Echo", parameters: ["value": "meanwhile"]) == ["value": "meanwhile"])
            #expect(service.parkedCount() == 8)

            let replies = releaseAll(calls, of: service, reading: raw)
            let expected = (0..<calls).map { String(decoding: VarlinkReply(parameters: ["index": .int(Int64($0))]).encoded().dropLast(), as: UTF8.self) }
            #expect(replies == expected)
            #expect(service.parking.withLock { ($0.most, $0.total) } == (8, calls))
        }
    }

    @Test func onewayCallsCountWhileTheServiceHoldsThem() throws {
        try withServer(configuration: .testing(maximumPendingCalls: 4)) { _, path, service in
            let raw = try RawConnection(path: path)
            let calls = 500
            sendInBackground(parkFrames(calls, oneway: true), on: raw.descriptor)
            #expect(eventually { service.parkedCount() == 4 })
            _ = releaseAll(calls, of: service, reading: nil)
            #expect(service.parking.withLock { ($0.most, $0.total) } == (4, calls))
            // The connection still answers once its oneway calls are done.
            raw.send(VarlinkCall(method: "org.example.test.Echo", parameters: ["value": "after"]).encoded())
            #expect(raw.readFrames(1) == [#"{"parameters":{"value":"after"}}"#])
        }
    }

    @Test func aClientThatHangsUpWhileHeldBackIsClosed() throws {
        try withServer(configuration: .testing(maximumPendingCalls: 4)) { server, path, service in
            var raw: RawConnection? = try RawConnection(path: path)
            raw?.send(parkFrames(100))
            #expect(eventually { service.parkedCount() == 4 })
            #expect(server.connectionCount == 1)
            raw = nil
            #expect(eventually { server.connectionCount == 0 })
            // Finishing calls of a closed connection resumes nothing and breaks nothing.
            #expect(service.releaseParked() == 4)
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "next"]) == ["value": "next"])
            #expect(service.parking.withLock { $0.total } == 4)
        }
    }

    @Test func callsAnsweredInTheirHandlerNeverHoldTheConnectionBack() throws {
        try withServer(configuration: .testing(maximumPendingCalls: 1)) { _, path, _ in
            let raw = try RawConnection(path: path)
            let calls = 2000
            let frames = (0..<calls).flatMap {
                VarlinkCall(method: "org.example.test.Add", parameters: ["a": .int(Int64($0)), "b": 1]).encoded()
            }
            sendInBackground(frames, on: raw.descriptor)
            let replies = raw.readFrames(calls)
            #expect(replies.count == calls)
            #expect(replies.last == #"{"parameters":{"sum":\#(calls)}}"#)
        }
    }

    @Test func aPendingCallDroppedUnfinishedFinishesItself() throws {
        try withServer(configuration: .testing(maximumPendingCalls: 2)) { _, path, service in
            let raw = try RawConnection(path: path)
            raw.send(parkFrames(3))
            #expect(eventually { service.parkedCount() == 2 })
            let connection = try #require(service.parking.withLock { $0.held.first?.connection })
            #expect(connection.pendingCallCount == 2)
            // Forgetting the held calls without finishing them releases their tokens.
            service.parking.withLock { $0.held.removeAll() }
            #expect(eventually { service.parkedCount() == 1 })
            #expect(connection.pendingCallCount == 1)
        }
    }
}

import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

/// Bytes a hostile or broken client might send, and what the server must answer.
struct HostileInput: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    /// The error reply expected before the close, if any.
    let expectedError: VarlinkError?

    var testDescription: String { name }

    static let all: [HostileInput] = [
        HostileInput(name: "garbage bytes", bytes: [0xFF, 0xFE, 0x00, 0x41, 0x00], expectedError: nil),
        HostileInput(name: "invalid JSON", bytes: Array("{\"method\": \0".utf8), expectedError: nil),
        HostileInput(name: "invalid UTF-8 in JSON", bytes: [0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D, 0x00], expectedError: nil),
        HostileInput(name: "an array instead of an object", bytes: Array("[1,2]\0".utf8), expectedError: nil),
        HostileInput(name: "deep nesting", bytes: Array((String(repeating: "[", count: 100_000) + "\0").utf8), expectedError: nil),
        HostileInput(
            name: "parameters of the wrong type",
            bytes: Array(#"{"method":"org.example.test.Echo","parameters":["x"]}"#.utf8) + [0],
            expectedError: .invalidParameter("parameters")
        ),
        HostileInput(
            name: "a flag of the wrong type",
            bytes: Array(#"{"method":"org.example.test.Echo","more":"yes"}"#.utf8) + [0],
            expectedError: .invalidParameter("more")
        ),
        HostileInput(
            name: "a call without a method",
            bytes: Array(#"{"parameters":{}}"#.utf8) + [0],
            expectedError: .invalidParameter("method")
        ),
        HostileInput(
            name: "a malformed method name",
            bytes: Array(#"{"method":"../../etc/passwd"}"#.utf8) + [0],
            expectedError: .invalidParameter("method")
        ),
    ]
}

@Suite("Server: hostile input")
struct ServerHostileInputTests {
    @Test("a bad frame gets an error or a close, and other clients never notice", arguments: HostileInput.all)
    func hostileFrame(input: HostileInput) throws {
        try withServer { server, path, _ in
            let bystander = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try bystander.call("org.example.test.Echo", parameters: ["value": "before"]) == ["value": "before"])

            let attacker = try RawConnection(path: path)
            attacker.send(input.bytes)
            let (bytes, closed) = attacker.readUntilClosed()
            #expect(closed, "the server must close the connection")
            if let expected = input.expectedError {
                let frame = Array(bytes.prefix { $0 != 0 })
                let reply = try frame.withUnsafeBytes { try VarlinkReply(parsing: $0) }
                #expect(reply.failure == expected)
            } else {
                #expect(bytes.isEmpty, "garbage gets no reply")
            }

            #expect(try bystander.call("org.example.test.Echo", parameters: ["value": "after"]) == ["value": "after"])
            #expect(eventually { server.connectionCount == 1 })
        }
    }

    @Test func tenMebibytesWithoutNULAreCutOffEarly() throws {
        try withServer { server, path, _ in
            let bystander = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            let attacker = try RawConnection(path: path)
            let chunk = [UInt8](repeating: 0x20, count: 1 << 20)
            var sentChunks = 0
            for _ in 0..<10 {
                guard attacker.send(chunk) else { break }
                sentChunks += 1
            }
            // The server closes after a little over 1 MiB; the kernel buffers a bit more.
            #expect(sentChunks < 10, "the server must hang up before 10 MiB are accepted")
            #expect(attacker.readUntilClosed().closed)
            #expect(try bystander.call("org.example.test.Echo", parameters: ["value": "fine"]) == ["value": "fine"])
            #expect(eventually { server.connectionCount == 1 })
        }
    }

    @Test func validCallsBeforeABadFrameAreStillAnswered() throws {
        try withServer { _, path, _ in
            let connection = try RawConnection(path: path)
            connection.send(#"{"method":"org.example.test.Echo","parameters":{"value":"first"}}"# + "\0" + "junk\0")
            let (bytes, closed) = connection.readUntilClosed()
            #expect(closed)
            let frame = Array(bytes.prefix { $0 != 0 })
            let reply = try frame.withUnsafeBytes { try VarlinkReply(parsing: $0) }
            #expect(reply.parameters == ["value": "first"])
        }
    }

    @Test func aClientThatStopsReadingIsDropped() throws {
        try withServer(configuration: .testing(maximumPendingOutput: 256 * 1024)) { server, path, service in
            let bystander = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            let sluggard = try RawConnection(path: path)
            sluggard.send(#"{"method":"org.example.test.Flood","parameters":{"count":2000,"size":10000},"more":true}"# + "\0")
            // Never read: once the kernel buffer and the 256 KiB allowance fill, the server gives up.
            #expect(eventually(timeout: .seconds(10)) { service.closedCount() == 1 })
            #expect(try bystander.call("org.example.test.Echo", parameters: ["value": "ok"]) == ["value": "ok"])
            #expect(eventually { server.connectionCount == 1 })
        }
    }
}

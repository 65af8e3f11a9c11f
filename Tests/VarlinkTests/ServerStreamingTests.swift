import Synchronization
import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

@Suite("Server: streaming, oneway and close notifications")
struct ServerStreamingTests {
    @Test func streamsRepliesWithContinues() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.startStreaming("org.example.test.Count", parameters: ["count": 5])
            var indexes: [Int64] = []
            while true {
                let reply = try client.receiveReply()
                indexes.append(reply.parameters["index"]?.intValue ?? -1)
                if !reply.continues { break }
            }
            #expect(indexes == [0, 1, 2, 3, 4])
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "next"]) == ["value": "next"])
        }
    }

    @Test func onewayCallsAreServedWhileAStreamIsOpen() throws {
        try withServer { _, path, service in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.startStreaming("org.example.test.Converse", parameters: ["question": "Password:"])
            let prompt = try client.receiveReply()
            #expect(prompt.continues)
            #expect(prompt.parameters["question"] == "Password:")
            try client.sendOneway("org.example.test.Answer", parameters: ["text": "secret"])
            let final = try client.receiveReply()
            #expect(!final.continues)
            #expect(final.parameters["answer"] == "secret")
            #expect(service.answers.withLock { $0 } == ["secret"])
        }
    }

    @Test func onCloseFiresWhenTheClientHangsUpMidStream() throws {
        try withServer { server, path, service in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.startStreaming("org.example.test.Converse", parameters: ["question": "Continue?"])
            #expect(try client.receiveReply().continues)
            #expect(service.closedCount() == 0)
            client.close()
            #expect(eventually { service.closedCount() == 1 })
            #expect(eventually { server.connectionCount == 0 })
        }
    }

    @Test func onCloseFiresOnServerShutdownAndTheClientSeesTheHangUp() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/socket"
            let service = try TestService()
            let server = try VarlinkServer(listeningOn: path, configuration: .testing(), service: service)
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.startStreaming("org.example.test.Converse", parameters: ["question": "?"])
            _ = try client.receiveReply()
            server.shutdown()
            #expect(service.closedCount() == 1)
            #expect(throws: VarlinkClientError.connectionClosed) { try client.receiveReply() }
            #expect(throws: VarlinkClientError.connectionClosed) { try client.call("org.example.test.Echo") }
        }
    }

    @Test func onCloseRegisteredAfterCloseRunsAtOnce() throws {
        try withServer { _, path, service in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.startStreaming("org.example.test.Converse", parameters: ["question": "?"])
            _ = try client.receiveReply()
            let connection = try #require(service.conversing.withLock { $0 })
            #expect(!connection.isClosed)
            client.close()
            #expect(eventually { connection.isClosed && service.closedCount() == 1 })
            let ran = Mutex(false)
            connection.onClose { ran.withLock { $0 = true } }
            #expect(ran.withLock { $0 })
            // Replies to a closed connection are dropped, not an error.
            connection.reply(["late": true])
        }
    }

    @Test func repliesFromAnotherThreadArriveInOrder() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(10))
            try client.startStreaming("org.example.test.Flood", parameters: ["count": 300, "size": 10_000])
            var received = 0
            while true {
                let reply = try client.receiveReply()
                #expect(reply.parameters["data"]?.stringValue?.utf8.count == 10_000)
                received += 1
                if !reply.continues { break }
            }
            #expect(received == 300)
        }
    }
}

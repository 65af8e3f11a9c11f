import Foundation
import Synchronization
import SystemKit
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

/// A service exercising what the Guard needs: plain calls, parameter checks,
/// streamed replies, oneway calls answering a stream, replies from other
/// threads, and close notifications.
final class TestService: VarlinkService {
    static let interfaceText = """
        # A service for the Varlink tests.
        interface org.example.test

        type Peer (uid: int, gid: int, pid: int, hasPIDFD: bool, pidfd: int)

        # Returns its input.
        method Echo(value: string) -> (value: string)

        # Adds two integers.
        method Add(a: int, b: int) -> (sum: int)

        # Streams count replies with index 0 ..< count.
        method Count(count: int) -> (index: int)

        # Asks a question as a streamed reply, then waits for Answer.
        method Converse(question: string) -> (question: ?string, answer: ?string)

        # Answers the question of the connection's Converse call.
        method Answer(text: string) -> ()

        # Reports the caller as the server saw it.
        method WhoAmI() -> (peer: Peer)

        # Streams `count` replies of `size` bytes each, from another thread.
        method Flood(count: int, size: int) -> (data: string)

        # Never replies.
        method Hang() -> ()

        # Stays pending, held by the service, until the test releases it;
        # then replies (unless oneway).
        method Park(index: int) -> (index: int)

        # Declared but not implemented.
        method Unimplemented() -> ()

        error Failed (reason: string)

        """

    let interfaces: [VarlinkInterfaceDescription]
    /// How many connections have closed, by id, as the close callbacks saw them.
    let closedConnections = Mutex<[UInt64]>([])
    /// Texts received by Answer, in order.
    let answers = Mutex<[String]>([])
    /// The connection of the latest Converse call.
    let conversing = Mutex<VarlinkConnection?>(nil)
    /// Park calls held, oldest first, and the most ever held at once.
    let parking = Mutex(Parking())

    struct Parking {
        var held: [(connection: VarlinkConnection, call: VarlinkCall, pending: VarlinkPendingCall)] = []
        var most = 0
        var total = 0
    }

    init() throws {
        interfaces = [try VarlinkInterfaceDescription(Self.interfaceText)]
    }

    func closedCount() -> Int { closedConnections.withLock { $0.count } }

    /// Park calls held now.
    func parkedCount() -> Int { parking.withLock { $0.held.count } }

    /// Answers and finishes every Park call held now, oldest first.
    /// - Returns: how many were released.
    @discardableResult
    func releaseParked() -> Int {
        let released = parking.withLock { parking in
            defer { parking.held.removeAll() }
            return parking.held
        }
        for (connection, call, pending) in released {
            if call.expectsReply { connection.reply(["index": call.parameters["index"] ?? .null]) }
            pending.finish()
        }
        return released.count
    }

    func handle(_ call: VarlinkCall, on connection: VarlinkConnection) {
        // Answer replies to the Converse stream; Park holds its call either way.
        if call.oneway && call.memberName != "Answer" && call.memberName != "Park" { return }
        switch call.memberName {
        case "Echo":
            guard let value = call.parameters["value"]?.stringValue else {
                return connection.fail(.invalidParameter("value"))
            }
            connection.reply(["value": .string(value)])
        case "Add":
            guard let a = call.parameters["a"]?.intValue else { return connection.fail(.invalidParameter("a")) }
            guard let b = call.parameters["b"]?.intValue else { return connection.fail(.invalidParameter("b")) }
            connection.reply(["sum": .int(a &+ b)])
        case "Count":
            guard call.more else { return connection.fail(.expectedMore) }
            let count = call.parameters["count"]?.intValue ?? 0
            for index in 0..<max(count, 1) {
                connection.reply(["index": .int(index)], continues: index < count - 1)
            }
        case "Converse":
            guard call.more else { return connection.fail(.expectedMore) }
            let id = connection.id
            connection.onClose { self.closedConnections.withLock { $0.append(id) } }
            connection.attachment = "waiting"
            conversing.withLock { $0 = connection }
            connection.reply(["question": call.parameters["question"] ?? "?"], continues: true)
        case "Answer":
            let text = call.parameters["text"]?.stringValue ?? ""
            answers.withLock { $0.append(text) }
            let waiting = connection.withAttachment { attachment -> Bool in
                defer { attachment = nil }
                return attachment as? String == "waiting"
            }
            if waiting { connection.reply(["answer": .string(text)]) }
        case "WhoAmI":
            let peer = connection.peer
            connection.reply([
                "peer": [
                    "uid": .int(Int64(peer.uid)), "gid": .int(Int64(peer.gid)), "pid": .int(Int64(peer.pid)),
                    "hasPIDFD": .bool(peer.pidfd != nil), "pidfd": .int(Int64(peer.pidfd?.rawValue ?? -1)),
                ],
            ])
        case "Flood":
            let id = connection.id
            connection.onClose { self.closedConnections.withLock { $0.append(id) } }
            let count = Int(call.parameters["count"]?.intValue ?? 1)
            let data = String(repeating: "x", count: Int(call.parameters["size"]?.intValue ?? 1))
            Thread.detachNewThread {
                for index in 0..<count where !connection.isClosed {
                    connection.reply(["data": .string(data)], continues: index < count - 1)
                }
            }
        case "Hang":
            break
        case "Park":
            let pending = connection.beginPendingCall()
            parking.withLock { parking in
                parking.held.append((connection, call, pending))
                parking.most = max(parking.most, parking.held.count)
                parking.total += 1
            }
        default:
            connection.fail(.methodNotImplemented(call.method))
        }
    }
}

extension VarlinkServerConfiguration {
    /// The configuration the tests' servers use.
    static func testing(
        maximumConnections: Int = 4096, maximumPendingOutput: Int = 4 << 20, maximumPendingCalls: Int = 64
    ) -> VarlinkServerConfiguration {
        var configuration = VarlinkServerConfiguration(
            vendor: "Example", product: "Varlink tests", version: "1.0", url: "https://example.invalid/varlink"
        )
        configuration.maximumConnections = maximumConnections
        configuration.maximumPendingOutput = maximumPendingOutput
        configuration.maximumPendingCallsPerConnection = maximumPendingCalls
        configuration.logger = Logger(label: "varlink-test", minimumLevel: .warning)
        return configuration
    }
}

/// Runs `body` with a server for `service` listening in a fresh temporary
/// directory, shut down afterwards.
func withServer<Result>(
    service: TestService? = nil,
    configuration: VarlinkServerConfiguration = .testing(),
    _ body: (VarlinkServer, String, TestService) throws -> Result
) throws -> Result {
    try withTemporaryDirectory { directory in
        let path = directory + "/socket"
        let service = try service ?? TestService()
        let server = try VarlinkServer(listeningOn: path, configuration: configuration, service: service)
        defer { server.shutdown() }
        return try body(server, path, service)
    }
}

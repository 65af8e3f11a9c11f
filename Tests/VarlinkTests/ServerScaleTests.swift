#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

@Suite("Server: many connections")
struct ServerScaleTests {
    @Test func aThousandIdleConnectionsThenACallStillWorks() throws {
        try withServer { server, path, _ in
            var idle: [RawConnection] = []
            for _ in 0..<1000 { idle.append(try RawConnection(path: path)) }
            #expect(eventually { server.connectionCount == 1000 })
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "busy"]) == ["value": "busy"])
            idle.removeAll()
            #expect(eventually { server.connectionCount == 1 })
        }
    }

    @Test func connectionsPastTheLimitAreClosedAtOnce() throws {
        try withServer(configuration: .testing(maximumConnections: 2)) { server, path, _ in
            let first = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            let second = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(eventually { server.connectionCount == 2 })
            let third = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(throws: VarlinkClientError.connectionClosed) { try third.call("org.example.test.Echo") }
            #expect(try first.call("org.example.test.Echo", parameters: ["value": "1"]) == ["value": "1"])
            second.close()
            #expect(eventually { server.connectionCount == 1 })
            let fourth = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try fourth.call("org.example.test.Echo", parameters: ["value": "4"]) == ["value": "4"])
        }
    }

    @Test func oneUserPastItsLimitIsRefusedWhileOthersAreServed() throws {
        var configuration = VarlinkServerConfiguration.testing()
        configuration.maximumConnectionsPerUser = 2
        configuration.usersWithoutConnectionLimit = []  // these tests run as one user, often root
        try withServer(configuration: configuration) { server, path, _ in
            let first = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            let second = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(eventually { server.connectionCount == 2 })
            let third = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(throws: VarlinkClientError.connectionClosed) { try third.call("org.example.test.Echo") }
            #expect(try second.call("org.example.test.Echo", parameters: ["value": "2"]) == ["value": "2"])
            first.close()
            #expect(eventually { server.connectionCount == 1 })
            let fourth = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            #expect(try fourth.call("org.example.test.Echo", parameters: ["value": "4"]) == ["value": "4"])
        }
    }

    @Test func exemptUsersHaveNoLimitOfTheirOwn() throws {
        var configuration = VarlinkServerConfiguration.testing()
        configuration.maximumConnectionsPerUser = 1
        configuration.usersWithoutConnectionLimit = [getuid()]
        try withServer(configuration: configuration) { server, path, _ in
            let clients = try (0..<3).map { _ in try VarlinkClient(path: path, replyTimeout: .seconds(5)) }
            for (index, client) in clients.enumerated() {
                #expect(try client.call("org.example.test.Echo", parameters: ["value": .string("\(index)")]) == ["value": .string("\(index)")])
            }
        }
    }

    @Test func manyClientsOnManyThreadsAllGetTheirOwnReplies() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let path = directory + "/socket"
            let server = try VarlinkServer(listeningOn: path, configuration: .testing(), service: try TestService())
            defer { server.shutdown() }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        let client = try VarlinkClient(path: path, replyTimeout: .seconds(10))
                        var good = 0
                        for index in 0..<200 {
                            let sum = try client.call("org.example.test.Add", parameters: [
                                "a": .int(Int64(worker)), "b": .int(Int64(index)),
                            ])
                            if sum["sum"]?.intValue == Int64(worker + index) { good += 1 }
                        }
                        return good
                    }
                }
                var total = 0
                for try await good in group { total += good }
                #expect(total == 16 * 200)
            }
        }
    }
}

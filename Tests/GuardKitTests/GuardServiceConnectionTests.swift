import Foundation
@testable import GuardKit
import Synchronization
import SystemKit
import Testing
import TestSupport
import Varlink
import VarlinkClientKit
import VarlinkServerKit
import FamilyConfiguration
@testable import GuardIdentity
@testable import GuardPolicy

/// What the Guard's service keeps per connection stays the same size however
/// many calls the connection makes.
@Suite struct GuardServiceConnectionTests {
    /// The Guard's service, remembering the connections it was called on.
    final class Watched: VarlinkService {
        let service: GuardService
        let connections = Mutex<[UInt64: VarlinkConnection]>([:])
        var interfaces: [VarlinkInterfaceDescription] { service.interfaces }

        init(_ service: GuardService) { self.service = service }

        func handle(_ call: VarlinkCall, on connection: VarlinkConnection) {
            connections.withLock { $0[connection.id] = connection }
            service.handle(call, on: connection)
        }
    }

    /// Serves a Guard with an empty family on a temporary socket; the test
    /// process, not being an app, is refused every app call.
    private func withGuardService(conversationThreads: Int = GuardLimits().conversationThreads,
                                  _ body: (Watched, VarlinkClient) throws -> Void) throws {
        try withStore { store, directory in
            var limits = GuardLimits()
            limits.conversationThreads = conversationThreads
            let policy = try AuthorizationPolicy(store: store, configuration: GuardConfiguration(),
                                                 locker: LockEngineLocker(journal: store, logger: .quiet), limits: limits,
                                                 logger: .quiet)
            let watched = Watched(try GuardService(policy: policy, logger: .quiet))
            var configuration = VarlinkServerConfiguration(vendor: "test", product: "guard", version: "0", url: "")
            configuration.logger = .quiet
            let server = try VarlinkServer(listeningOn: directory + "/guard.socket", configuration: configuration, service: watched)
            defer { server.shutdown() }
            let client = try VarlinkClient(path: directory + "/guard.socket", replyTimeout: .seconds(30))
            defer { client.close() }
            try body(watched, client)
        }
    }

    /// The name of the error that ends `method`'s call, or "reply".
    private func outcome(_ client: VarlinkClient, _ method: String, _ parameters: JSONObject = [:], more: Bool) throws -> String {
        do {
            if more {
                try client.startStreaming("org.familycontrols.guard.\(method)", parameters: parameters)
                _ = try client.receiveReply()
            } else {
                _ = try client.call("org.familycontrols.guard.\(method)", parameters: parameters)
            }
            return "reply"
        } catch .remote(let error) {
            return error.name
        }
    }

    /// The error that ends `method`'s call, or nil for a reply.
    private func failure(_ client: VarlinkClient, _ method: String, _ parameters: JSONObject,
                         more: Bool) throws -> VarlinkError? {
        do {
            _ = try outcomeOrThrow(client, method, parameters, more: more)
            return nil
        } catch .remote(let error) {
            return error
        }
    }

    private func outcomeOrThrow(_ client: VarlinkClient, _ method: String, _ parameters: JSONObject,
                                more: Bool) throws(VarlinkClientError) {
        if more {
            try client.startStreaming("org.familycontrols.guard.\(method)", parameters: parameters)
            _ = try client.receiveReply()
        } else {
            _ = try client.call("org.familycontrols.guard.\(method)", parameters: parameters)
        }
    }

    /// As sd-varlink does, a call whose parameters are not what the interface
    /// says (a field missing, of the wrong type, an enum value it does not
    /// list, a field it does not name) is refused with InvalidParameter
    /// naming the field, and one that needs `more` without it with
    /// ExpectedMore, before any handler runs.
    @Test func callsAreCheckedAgainstTheInterfaceBeforeDispatch() throws {
        try withGuardService { _, client in
            let invalid = "org.varlink.service.InvalidParameter"
            let cases: [(String, JSONObject, Bool, String)] = [
                ("RequestAuthorization", ["member": "parent"], true, "member"),
                ("RequestAuthorization", [:], true, "member"),
                ("DecideRequest", ["id": "4", "approve": true], true, "id"),
                ("ListAuthorizations", ["user": 5], false, "user"),
                ("ListAuthorizations", ["uid": 0], false, "uid"),
                ("SetStatus", ["user": "alice", "app": "org.example.Paint", "status": "maybe"], false, "status"),
                ("ReadAudit", ["since": "yesterday"], false, "since"),
                ("VerifyLocks", [:], false, "repair"),
                ("OpenSession", ["token": "0", "user": "alice"], false, "service"),
                ("CloseSession", ["token": 7], false, "token"),
            ]
            for (method, parameters, more, field) in cases {
                let error = try failure(client, method, parameters, more: more)
                #expect(error?.name == invalid, "\(method) \(parameters): \(String(describing: error))")
                #expect(error?.parameters["parameter"]?.stringValue == field, "\(method) \(parameters)")
            }
            for method in ["Subscribe", "RevokeAuthorization", "WatchRequests"] {
                #expect(try failure(client, method, [:], more: false)?.name == "org.varlink.service.ExpectedMore", "\(method)")
            }
            #expect(try failure(client, "RequestAuthorization", ["member": "child"], more: false)?.name
                    == "org.varlink.service.ExpectedMore")
            // What the interface allows still gets through: null for an optional, root's list.
            #expect(try failure(client, "ListAuthorizations", ["user": .null], more: false) == nil)
        }
    }

    @Test func refusedCallsLeaveNoCloseCallbacksBehindOnTheirConnection() throws {
        try withGuardService { watched, client in
            var outcomes: [String: Int] = [:]
            for _ in 0..<20_000 { outcomes[try outcome(client, "GetStatus", more: false), default: 0] += 1 }
            for _ in 0..<1_000 { outcomes[try outcome(client, "Subscribe", more: true), default: 0] += 1 }
            for _ in 0..<2_000 {
                outcomes[try outcome(client, "RequestAuthorization", ["member": "child"], more: true), default: 0] += 1
                outcomes[try outcome(client, "RevokeAuthorization", more: true), default: 0] += 1
            }
            #expect(outcomes == ["org.familycontrols.guard.InvalidArgument": 25_000])
            let connection = try #require(watched.connections.withLock { $0.values.first })
            // The session's one close handler, and nothing per call.
            #expect(connection.closeCallbackCount == 1)
            #expect(pollUntil { connection.pendingCallCount == 0 })
        }
    }
}

/// The Guard's threads are bounded, and shared fairly: apps' requests that
/// hold every conversation thread never make a guardian's or root's decision
/// busy, and one user holds at most a few conversations.
@Suite struct GuardServicePoolTests {
    @Test func aDecisionIsNeverBusyWhileAppsRequestsHoldEveryConversationThread() throws {
        try withStore { store, directory in
            var limits = GuardLimits()
            limits.conversationThreads = 2
            let policy = try AuthorizationPolicy(store: store, configuration: GuardConfiguration(),
                                                 locker: LockEngineLocker(journal: store, logger: .quiet), limits: limits,
                                                 logger: .quiet)
            let service = try GuardService(policy: policy, logger: .quiet)
            var configuration = VarlinkServerConfiguration(vendor: "test", product: "guard", version: "0", url: "")
            configuration.logger = .quiet
            let server = try VarlinkServer(listeningOn: directory + "/guard.socket", configuration: configuration, service: service)
            defer { server.shutdown() }
            let client = try VarlinkClient(path: directory + "/guard.socket", replyTimeout: .seconds(30))
            defer { client.close() }

            // Two requests waiting for people hold both of the apps' threads.
            let released = Mutex(false)
            let started = Atomic<Int>(0)
            for _ in 0..<2 {
                try service.conversations.submit {
                    started.add(1, ordering: .relaxed)
                    while !released.withLock({ $0 }) { usleep(1_000) }
                }
            }
            #expect(pollUntil { started.load(ordering: .relaxed) == 2 })
            #expect(throws: BlockingExecutor.Saturated.self) { try service.conversations.submit {} }

            // Root deciding a request is answered, not refused as busy:
            // request 999 waits for no one, which is said before any thread is taken.
            let decided = try decide(client)
            #expect(decided.name == "org.familycontrols.guard.NotFound")
            #expect(decided.message == "no request 999 is waiting for root to decide")
            #expect(service.decisions.snapshot.threads == 0)
            released.withLock { $0 = true }
        }
    }

    @Test func eachUserHoldsAtMostTheirBoundAndRootIsNotCounted() {
        let counts = ConversationsPerUser(limit: 4)
        for _ in 0..<4 { #expect(counts.enter(1000) == .entered) }
        // Refused, and only the first refusal is worth reporting.
        #expect(counts.enter(1000) == .refused(first: true))
        #expect(counts.enter(1000) == .refused(first: false))
        #expect(counts.count(of: 1000) == 4)
        // Another user, and root, are not held back by the first.
        #expect(counts.enter(1001) == .entered)
        for _ in 0..<100 { #expect(counts.enter(0) == .entered) }
        #expect(counts.count(of: 0) == 0)
        counts.leave(1000)
        #expect(counts.enter(1000) == .entered)
        #expect(counts.enter(1000) == .refused(first: true))
        for _ in 0..<4 { counts.leave(1000) }
        #expect(counts.count(of: 1000) == 0)
    }

    /// Decides request 999, which does not exist; the error's name and message.
    private func decide(_ client: VarlinkClient) throws -> (name: String, message: String) {
        let failure: VarlinkError
        do throws(VarlinkClientError) {
            try client.startStreaming("org.familycontrols.guard.DecideRequest", parameters: ["id": 999, "approve": true])
            _ = try client.receiveReply()
            return ("reply", "")
        } catch {
            guard case .remote(let remote) = error else { throw error }
            failure = remote
        }
        return (failure.name, failure.parameters["message"]?.stringValue ?? "")
    }
}

import Testing
@testable import Varlink
@testable import VarlinkClientKit
@testable import VarlinkServerKit

@Suite("Server: routing and org.varlink.service")
struct ServerIntrospectionTests {
    @Test func roundTripsACall() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "hello"]) == ["value": "hello"])
            #expect(try client.call("org.example.test.Add", parameters: ["a": 40, "b": 2]) == ["sum": 42])
        }
    }

    @Test func getInfoDescribesTheServiceAndItsInterfaces() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let info = try client.call("org.varlink.service.GetInfo")
            #expect(info == [
                "vendor": "Example", "product": "Varlink tests", "version": "1.0",
                "url": "https://example.invalid/varlink",
                "interfaces": ["org.varlink.service", "org.example.test"],
            ])
        }
    }

    @Test func getInterfaceDescriptionReturnsTheText() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            let own = try client.call("org.varlink.service.GetInterfaceDescription", parameters: ["interface": "org.example.test"])
            #expect(own["description"]?.stringValue == TestService.interfaceText)
            let standard = try client.call(
                "org.varlink.service.GetInterfaceDescription", parameters: ["interface": "org.varlink.service"]
            )
            #expect(standard["description"]?.stringValue == VarlinkServiceInterface.text)
        }
    }

    /// Calls that must fail, and the exact error each gets.
    static let failingCalls: [(String, JSONObject, VarlinkError)] = [
        ("org.example.test.Nope", [:], .methodNotFound("org.example.test.Nope")),
        ("org.example.other.Echo", [:], .interfaceNotFound("org.example.other")),
        ("org.varlink.service.Nope", [:], .methodNotFound("org.varlink.service.Nope")),
        ("org.varlink.service.GetInterfaceDescription", ["interface": "org.example.nope"],
         .interfaceNotFound("org.example.nope")),
        ("org.varlink.service.GetInterfaceDescription", [:], .invalidParameter("interface")),
        ("org.varlink.service.GetInterfaceDescription", ["interface": 3], .invalidParameter("interface")),
        ("org.example.test.Add", ["a": "forty", "b": 2], .invalidParameter("a")),
        ("org.example.test.Add", ["a": 1.5, "b": 2], .invalidParameter("a")),
        ("org.example.test.Echo", [:], .invalidParameter("value")),
        ("org.example.test.Count", ["count": 2], .expectedMore),
        ("org.example.test.Unimplemented", [:], .methodNotImplemented("org.example.test.Unimplemented")),
    ]

    @Test("errors reach the client typed, and the connection stays usable", arguments: failingCalls)
    func failingCall(method: String, parameters: JSONObject, expected: VarlinkError) throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            #expect(throws: VarlinkClientError.remote(expected)) {
                try client.call(method, parameters: parameters)
            }
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "still here"])["value"] == "still here")
        }
    }

    @Test func upgradeIsRefused() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path)
            try client.send(VarlinkCall(method: "org.example.test.Echo", parameters: ["value": "x"], upgrade: true))
            #expect(throws: VarlinkClientError.remote(.invalidParameter("upgrade"))) { try client.receiveReply() }
        }
    }

    @Test func onewayCallsGetNoReplyNotEvenAnError() throws {
        try withServer { _, path, service in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            try client.sendOneway("org.example.test.Nope")
            try client.sendOneway("org.example.test.Echo", parameters: ["value": "ignored"])
            try client.sendOneway("org.example.test.Answer", parameters: ["text": "noted"])
            // The first reply to arrive must be the one for this call.
            #expect(try client.call("org.example.test.Echo", parameters: ["value": "after"]) == ["value": "after"])
            #expect(service.answers.withLock { $0 } == ["noted"])
        }
    }

    @Test func pipelinedCallsAreAnsweredInOrder() throws {
        try withServer { _, path, _ in
            let client = try VarlinkClient(path: path, replyTimeout: .seconds(5))
            for index in 0..<200 {
                try client.send(VarlinkCall(method: "org.example.test.Add", parameters: ["a": .int(Int64(index)), "b": 0]))
            }
            for index in 0..<200 {
                #expect(try client.receiveReply().parameters == ["sum": .int(Int64(index))])
            }
        }
    }
}

import Testing
@testable import Varlink

@Suite("Varlink messages")
struct VarlinkMessageTests {
    @Test func decodesAFullCall() throws {
        let value = try JSONValue(parsing: #"""
            {"method": "org.example.test.Echo", "parameters": {"value": "x"}, "more": true, "future": 1}
            """#)
        let call = try VarlinkCall(decoding: value)
        #expect(call == VarlinkCall(method: "org.example.test.Echo", parameters: ["value": "x"], more: true))
        #expect(call.interface == "org.example.test")
        #expect(call.memberName == "Echo")
    }

    @Test func absentOrNullParametersAndFlagsMeanEmptyAndFalse() throws {
        let call = try VarlinkCall(decoding: ["method": "a.b.C", "parameters": nil, "oneway": nil])
        #expect(call == VarlinkCall(method: "a.b.C"))
    }

    static let invalidCalls: [(JSONValue, VarlinkMessageError)] = [
        ([1, 2], .notAnObject),
        ("org.example.Method", .notAnObject),
        (["parameters": [:]], .missingField("method")),
        (["method": 7], .wrongFieldType("method", expected: "a string")),
        (["method": "NoInterface"], .invalidMethodName("NoInterface")),
        (["method": "org.example.lowercase"], .invalidMethodName("org.example.lowercase")),
        (["method": "single.Method"], .invalidMethodName("single.Method") ),
        (["method": "org..example.Method"], .invalidMethodName("org..example.Method")),
        (["method": "a.b.C", "parameters": []], .wrongFieldType("parameters", expected: "an object")),
        (["method": "a.b.C", "parameters": "x"], .wrongFieldType("parameters", expected: "an object")),
        (["method": "a.b.C", "more": "yes"], .wrongFieldType("more", expected: "a boolean")),
        (["method": "a.b.C", "oneway": 1], .wrongFieldType("oneway", expected: "a boolean")),
        (["method": "a.b.C", "upgrade": [:]], .wrongFieldType("upgrade", expected: "a boolean")),
        (["method": "a.b.C", "oneway": true, "more": true], .onewayWithMore),
    ]

    @Test("rejects malformed calls", arguments: invalidCalls)
    func rejectsCall(value: JSONValue, expected: VarlinkMessageError) {
        #expect(throws: expected) { try VarlinkCall(decoding: value) }
    }

    @Test func callEncodingEndsWithOneNULAndParsesBack() throws {
        let call = VarlinkCall(method: "org.example.test.Count", parameters: ["count": 3], more: true)
        let bytes = call.encoded()
        #expect(bytes.last == 0)
        #expect(bytes.dropLast().contains(0) == false)
        let decoded = try Array(bytes.dropLast()).withUnsafeBytes { try VarlinkCall(parsing: $0) }
        #expect(decoded == call)
    }

    @Test func replyEncodingRoundTrips() throws {
        let replies = [
            VarlinkReply(parameters: ["a": 1]),
            VarlinkReply(parameters: [:], continues: true),
            VarlinkReply(failure: .methodNotFound("x.y.Z")),
        ]
        for reply in replies {
            let bytes = reply.encoded()
            #expect(bytes.last == 0)
            let decoded = try Array(bytes.dropLast()).withUnsafeBytes { try VarlinkReply(parsing: $0) }
            #expect(decoded == reply)
        }
    }

    @Test func anErrorReplyCarriesItsNameAndParameters() throws {
        let reply = try VarlinkReply(decoding: [
            "error": "org.varlink.service.InvalidParameter", "parameters": ["parameter": "a"],
        ])
        #expect(reply.failure == .invalidParameter("a"))
    }

    static let invalidReplies: [(JSONValue, VarlinkMessageError)] = [
        (nil, .notAnObject),
        (["parameters": 1], .wrongFieldType("parameters", expected: "an object")),
        (["continues": "true"], .wrongFieldType("continues", expected: "a boolean")),
        (["error": 5], .wrongFieldType("error", expected: "a string")),
        (["error": "NotQualified"], .invalidErrorName("NotQualified")),
    ]

    @Test("rejects malformed replies", arguments: invalidReplies)
    func rejectsReply(value: JSONValue, expected: VarlinkMessageError) {
        #expect(throws: expected) { try VarlinkReply(decoding: value) }
    }

    // Found by the varlink-call fuzz target (Tests/Fuzz): a method name is the
    // peer's text, and the error, which the server logs, quoted its control
    // characters as they were.
    @Test func anInvalidNameIsQuotedEscapedInTheError() throws {
        let frame = Array(#"{"method":"\#u{7f}rg.fami;lyc`ntrols.guard.ListAuthorizations","parameters":{"user":null}}"#.utf8)
        let method = "\u{7f}rg.fami;lyc`ntrols.guard.ListAuthorizations"
        #expect(throws: VarlinkMessageError.invalidMethodName(method)) {
            try frame.withUnsafeBytes { try VarlinkCall(parsing: $0) }
        }
        #expect(VarlinkMessageError.invalidMethodName(method).description
            == #""\x7Frg.fami;lyc`ntrols.guard.ListAuthorizations" is not a qualified method name"#)
        #expect(VarlinkMessageError.invalidErrorName("a.b\u{1B}[2J\u{202E}.C").description
            == #""a.b\x1B[2J\u{202E}.C" is not a qualified error name"#)
        let duplicate = JSONParseError(.duplicateKey("a\nb"), at: 10)
        #expect(throws: duplicate) { try JSONValue(parsing: #"{"a\nb":1,"a\nb":2}"#) }
        #expect(duplicate.description == #"invalid JSON at byte 10: duplicate object key "a\x0Ab""#)
    }

    @Test func invalidJSONIsReportedAsSuch() {
        #expect(performing: {
            try Array("{\"method\":".utf8).withUnsafeBytes { try VarlinkCall(parsing: $0) }
        }, throws: { error in
            if case .invalidJSON(let parseError) = error as? VarlinkMessageError {
                return parseError.reason == .unexpectedEnd
            }
            return false
        })
    }
}

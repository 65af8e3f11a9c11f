import Testing
@testable import Varlink

@Suite("JSON parser")
struct JSONParserTests {
    /// Texts and the value each must parse to.
    static let accepted: [(String, JSONValue)] = [
        ("null", .null),
        ("true", true),
        (" false ", false),
        ("0", 0),
        ("-0", 0),
        ("42", 42),
        ("-17", -17),
        ("9223372036854775807", .int(Int64.max)),
        ("-9223372036854775808", .int(Int64.min)),
        ("9223372036854775808", .double(9223372036854775808)),
        ("1.5", 1.5),
        ("-2.5e3", -2500.0),
        ("1E-2", 0.01),
        ("\"\"", ""),
        ("\"plain\"", "plain"),
        (#""esc\"\\\/\b\f\n\r\t""#, "esc\"\\/\u{8}\u{c}\n\r\t"),
        (#""\u00e9\u20AC""#, "é€"),
        (#""\ud83d\ude00""#, "😀"),
        ("\"é€😀\"", "é€😀"),
        (#""nul\u0000byte""#, "nul\u{0}byte"),
        ("[]", []),
        ("[1, \"two\", [3], {}]", [1, "two", [3], [:]]),
        ("{}", [:]),
        ("{\"a\": 1, \"b\": {\"c\": [true, null]}}", ["a": 1, "b": ["c": [true, nil]]]),
        ("\t\r\n {\"k\":\"v\"} \n", ["k": "v"]),
    ]

    @Test("accepts valid JSON", arguments: accepted)
    func accepts(text: String, expected: JSONValue) throws {
        #expect(try JSONValue(parsing: text) == expected)
    }

    /// Inputs and the exact reason each must be rejected for.
    static let rejected: [(String, [UInt8], JSONParseError.Reason)] = [
        ("empty", [], .unexpectedEnd),
        ("whitespace only", Array("  ".utf8), .unexpectedEnd),
        ("bare word", Array("nope".utf8), .unexpectedByte(UInt8(ascii: "o"))),
        ("truncated literal", Array("tru".utf8), .unexpectedEnd),
        ("trailing garbage", Array("{} x".utf8), .trailingBytes),
        ("two values", Array("1 2".utf8), .trailingBytes),
        ("trailing comma in array", Array("[1,]".utf8), .unexpectedByte(UInt8(ascii: "]"))),
        ("trailing comma in object", Array("{\"a\":1,}".utf8), .unexpectedByte(UInt8(ascii: "}"))),
        ("unquoted key", Array("{a:1}".utf8), .unexpectedByte(UInt8(ascii: "a"))),
        ("single quotes", Array("'a'".utf8), .unexpectedByte(UInt8(ascii: "'"))),
        ("missing colon", Array("{\"a\" 1}".utf8), .unexpectedByte(UInt8(ascii: "1"))),
        ("unterminated string", Array("\"abc".utf8), .unexpectedEnd),
        ("unterminated array", Array("[1, 2".utf8), .unexpectedEnd),
        ("leading zero", Array("012".utf8), .invalidNumber),
        ("bare minus", Array("-".utf8), .invalidNumber),
        ("dot without digits", Array("1.".utf8), .invalidNumber),
        ("exponent without digits", Array("1e".utf8), .invalidNumber),
        ("leading plus", Array("+1".utf8), .unexpectedByte(UInt8(ascii: "+"))),
        ("NaN", Array("NaN".utf8), .unexpectedByte(UInt8(ascii: "N"))),
        ("huge exponent", Array("1e999".utf8), .numberOutOfRange),
        ("raw newline in string", Array("\"a\nb\"".utf8), .controlCharacterInString),
        ("raw tab in string", Array("\"a\tb\"".utf8), .controlCharacterInString),
        ("unknown escape", Array(#""\x41""#.utf8), .invalidEscape),
        ("short unicode escape", Array(#""\u12""#.utf8), .invalidEscape),
        ("lone high surrogate", Array(#""\ud83d""#.utf8), .unpairedSurrogate),
        ("lone low surrogate", Array(#""\ude00""#.utf8), .unpairedSurrogate),
        ("high surrogate then letter", Array(#""\ud83dx""#.utf8), .unpairedSurrogate),
        ("invalid UTF-8 byte", [0x22, 0xFF, 0x22], .invalidUTF8),
        ("overlong encoding", [0x22, 0xC0, 0xAF, 0x22], .invalidUTF8),
        ("encoded surrogate", [0x22, 0xED, 0xA0, 0x80, 0x22], .invalidUTF8),
        ("beyond U+10FFFF", [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], .invalidUTF8),
        ("truncated sequence", [0x22, 0xE2, 0x82, 0x22], .invalidUTF8),
        ("stray continuation byte", [0x22, 0x80, 0x22], .invalidUTF8),
        ("duplicate key", Array("{\"a\":1,\"a\":2}".utf8), .duplicateKey("a")),
        ("byte order mark", [0xEF, 0xBB, 0xBF, 0x31], .unexpectedByte(0xEF)),
    ]

    @Test("rejects invalid JSON with the exact reason", arguments: rejected)
    func rejects(name: String, bytes: [UInt8], reason: JSONParseError.Reason) {
        #expect(performing: { try JSONValue(parsing: bytes) }, throws: { error in
            (error as? JSONParseError)?.reason == reason
        })
    }

    @Test func reportsTheOffsetOfTheProblem() {
        #expect(throws: JSONParseError(.unexpectedByte(UInt8(ascii: "x")), at: 5)) {
            try JSONValue(parsing: "[1, 2x]")
        }
    }

    @Test func nestingUpToTheLimitIsAccepted() throws {
        let depth = JSONParser.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue(parsing: text)
        var levels = 0
        while case .array(let inner) = value {
            levels += 1
            value = inner.first ?? .null
        }
        #expect(levels == depth)
    }

    @Test func nestingPastTheLimitIsRejected() {
        let depth = JSONParser.maximumDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(throws: JSONParseError(.tooDeep(limit: 64), at: 64)) { try JSONValue(parsing: arrays) }
        #expect(throws: JSONParseError(.tooDeep(limit: 64), at: 64 * 5)) { try JSONValue(parsing: objects) }
    }

    @Test func deepHostileNestingFailsWithoutExhaustingTheStack() {
        let text = String(repeating: "[", count: 1_000_000)
        #expect(throws: JSONParseError(.tooDeep(limit: 64), at: 64)) { try JSONValue(parsing: text) }
    }

    @Test func duplicateKeysAreFoundInLargeObjects() {
        var members = (0..<100).map { "\"k\($0)\":\($0)" }
        members.append("\"k7\":0")
        let text = "{" + members.joined(separator: ",") + "}"
        #expect(performing: { try JSONValue(parsing: text) }, throws: { error in
            (error as? JSONParseError)?.reason == .duplicateKey("k7")
        })
    }

    @Test func keepsObjectKeysInOrder() throws {
        let value = try JSONValue(parsing: #"{"zeta": 1, "alpha": 2, "mid": 3}"#)
        #expect(value.objectValue?.keys == ["zeta", "alpha", "mid"])
    }

    @Test func integersStayExact() throws {
        let value = try JSONValue(parsing: "[9007199254740993, -9007199254740993]")
        #expect(value[0]?.intValue == 9_007_199_254_740_993)
        #expect(value[1]?.intValue == -9_007_199_254_740_993)
    }

    @Test func accessorsReturnNilForOtherKinds() throws {
        let value = try JSONValue(parsing: #"{"s": "text", "n": 3, "f": 1.5, "b": true, "a": [1], "z": null}"#)
        #expect(value["s"]?.stringValue == "text")
        #expect(value["s"]?.intValue == nil)
        #expect(value["n"]?.intValue == 3)
        #expect(value["n"]?.doubleValue == 3)
        #expect(value["f"]?.intValue == nil)
        #expect(value["f"]?.doubleValue == 1.5)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?[0]?.intValue == 1)
        #expect(value["a"]?[1] == nil)
        #expect(value["z"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["a"]?["key"] == nil)
    }
}

import Testing
@testable import Varlink

@Suite("JSON serializer")
struct JSONSerializerTests {
    static let cases: [(JSONValue, String)] = [
        (.null, "null"),
        (true, "true"),
        (0, "0"),
        (.int(Int64.min), "-9223372036854775808"),
        (.int(Int64.max), "9223372036854775807"),
        (1.5, "1.5"),
        (1e-5, "1e-05"),
        (.double(.infinity), "null"),
        ("quote\" backslash\\ slash/", #""quote\" backslash\\ slash/""#),
        ("\n\r\t\u{8}\u{c}", #""\n\r\t\b\f""#),
        ("\u{0}\u{1}\u{1f}", #""\u0000\u0001\u001f""#),
        ("é😀", "\"é😀\""),
        ([1, "a", nil], #"[1,"a",null]"#),
        (["b": 1, "a": [:]], #"{"b":1,"a":{}}"#),
    ]

    @Test("writes compact, escaped JSON", arguments: cases)
    func writes(value: JSONValue, expected: String) {
        #expect(value.description == expected)
    }

    static let roundTrips: [JSONValue] = [
        ["method": "org.example.Method", "parameters": ["list": [1, 2.25, "x", false, nil], "nested": ["k": "v"]]],
        "control \u{0} \u{7f} and unicode \u{10FFFF}",
        [.int(Int64.min), .int(Int64.max), .double(-0.0), .double(.leastNonzeroMagnitude), .double(1.7976931348623157e308)],
    ]

    @Test("parsing the output gives the value back", arguments: roundTrips)
    func roundTrip(value: JSONValue) throws {
        #expect(try JSONValue(parsing: value.serialized()) == value)
    }

    @Test func outputNeverContainsTheFrameTerminator() {
        let value: JSONValue = ["key\u{0}": "value\u{0}"]
        #expect(!value.serialized().contains(0))
    }

    @Test func objectsCompareRegardlessOfKeyOrder() {
        let a: JSONObject = ["x": 1, "y": 2]
        let b: JSONObject = ["y": 2, "x": 1]
        #expect(a == b)
        #expect(a != ["x": 1, "y": 3])
        #expect(a != ["x": 1])
    }

    @Test func objectSubscriptReplacesAppendsAndRemoves() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 10
        object["c"] = 3
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(object["a"] == 10)
    }
}

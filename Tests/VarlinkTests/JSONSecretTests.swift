import SystemKit
import Testing
@testable import Varlink

/// Secrets in JSON: parsed straight to bytes for the members named secret,
/// written on the wire as the string they are, never shown in text.
@Suite("JSON secrets")
struct JSONSecretTests {
    private func parse(_ text: String, secretKeys: Set<String>) throws -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(UnsafeRawBufferPointer(buffer), secretKeys: secretKeys) }
        }
        return try result.get()
    }

    private func text(of secret: SecretBytes) -> String {
        secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aSecretMemberBecomesBytesAtAnyDepthAndOthersStayStrings() throws {
        let value = try parse(#"{"method":"x.Answer","parameters":{"id":1,"response":"hunter2","note":"plain"}}"#,
                              secretKeys: ["response"])
        let parameters = try #require(value["parameters"])
        let secret = try #require(parameters["response"]?.secretValue)
        #expect(text(of: secret) == "hunter2")
        #expect(parameters["response"]?.stringValue == nil, "a secret is never handed out as a String")
        #expect(parameters["note"] == .string("plain"))
        #expect(value["method"] == .string("x.Answer"))
    }

    @Test(arguments: [
        (#""p\"w\\d\u00e9\ud83d\ude00\n""#, "p\"w\\dé😀\n"),
        (#""""#, ""),
        (#""\/\b\f\r\t""#, "/\u{8}\u{C}\r\t"),
    ])
    func escapesDecodeAsInAnyString(raw: String, decoded: String) throws {
        let value = try parse(#"{"response":\#(raw)}"#, secretKeys: ["response"])
        #expect(text(of: try #require(value["response"]?.secretValue)) == decoded)
        // The same text outside a secret member parses to the same characters.
        #expect(try parse(#"{"other":\#(raw)}"#, secretKeys: ["response"])["other"]?.stringValue == decoded)
    }

    @Test func aSecretMemberThatIsNotAStringParsesAsWhatItIs() throws {
        #expect(try parse(#"{"response":null}"#, secretKeys: ["response"])["response"] == .null)
        #expect(try parse(#"{"response":[1]}"#, secretKeys: ["response"])["response"] == .array([.int(1)]))
    }

    @Test(arguments: [#"{"response":"abc"#, #"{"response":"a\"#, #"{"response":"\x01"}"#, #"{"response":"\u12"}"#])
    func malformedSecretsAreRefusedLikeMalformedStrings(text: String) throws {
        #expect(throws: JSONParseError.self) { try parse(text, secretKeys: ["response"]) }
    }

    @Test func invalidUTF8InASecretIsRefused() {
        let bytes: [UInt8] = Array(#"{"response":""#.utf8) + [0xFF, 0x22, 0x7D]
        #expect(throws: JSONParseError.self) {
            _ = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in try JSONParser.parse(buffer, secretKeys: ["response"]) }
        }
    }

    @Test func aSecretIsWrittenOnTheWireAndRedactedInText() throws {
        let secret = SecretBytes("pa\"ss\nword")
        let value: JSONValue = ["id": 1, "response": .secret(secret)]
        let wire = String(decoding: value.serialized(), as: UTF8.self)
        #expect(wire == #"{"id":1,"response":"pa\"ss\nword"}"#)
        #expect(value.description == #"{"id":1,"response":"(secret)"}"#)
        #expect(value.secretByteCount == secret.count)
        // And it reads back as the same bytes.
        let back = try parse(wire, secretKeys: ["response"])
        #expect(back["response"]?.secretValue == secret)
    }

    @Test func aCallCarryingASecretRoundTripsThroughItsFrame() throws {
        let long = SecretBytes(String(repeating: "\"", count: 500) + "é")
        let call = VarlinkCall(method: "org.example.Answer", parameters: ["id": 1, "response": .secret(long)], oneway: true)
        #expect(call.carriesSecret)
        #expect(!VarlinkCall(method: "org.example.Ping").carriesSecret)
        let frame = call.encoded()
        #expect(frame.last == 0)
        let parsed = try frame.dropLast().withUnsafeBytes { bytes in
            try VarlinkCall(parsing: bytes, secretParameters: ["response"])
        }
        #expect(parsed.parameters["response"]?.secretValue == long)
        #expect(parsed.oneway)
    }
}

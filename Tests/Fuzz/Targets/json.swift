// The JSON parser, as the Guard runs it on every frame a client sends.
//
// Properties, for every input:
// - parsing stays within its heap bound and its depth limit;
// - a failure is a JSONParseError at an offset inside the input, whose
//   description is one short line;
// - naming secret members changes what a string becomes, never whether the
//   text parses or what it says;
// - a parsed value serialises to valid UTF-8 without NUL, parses again to the
//   same value, and serialises again to the same bytes;
// - the description of a value with secrets is the value with each secret
//   shown as "(secret)".
import SystemKit
import Varlink

/// The Guard's secret parameter (GuardService.secretParameters).
private let secretKeys: Set<String> = ["response"]

@c(LLVMFuzzerTestOneInput)
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { input in
        // The bound JSONParser states: a value costs a small multiple of the
        // bytes that wrote it.
        let bound = 64 * input.count + (64 << 10)
        let plain = withinHeapBound(bound, "parsing \(input.count) bytes") {
            Result { () throws(JSONParseError) in try JSONParser.parse(input) }
        }
        let withSecrets = withinHeapBound(bound, "parsing \(input.count) bytes with secrets") {
            Result { () throws(JSONParseError) in try JSONParser.parse(input, secretKeys: secretKeys) }
        }
        switch (plain, withSecrets) {
        case (.failure(let error), .failure(let secretError)):
            checkError(error, inputCount: input.count)
            checkError(secretError, inputCount: input.count)
        case (.success(let value), .success(let secretValue)):
            require(revealed(secretValue) == value, "secret members changed what the text says: \(value)")
            checkRoundTrip(value, secretKeys: [])
            checkRoundTrip(secretValue, secretKeys: secretKeys)
            checkDescription(of: secretValue)
        case (.success, .failure(let error)), (.failure(let error), .success):
            require(false, "the text parses only with\(plain.isSuccess ? "out" : "") secret keys: \(error)")
        }
    }
    return 0
}

private func checkError(_ error: JSONParseError, inputCount: Int) {
    require((0...inputCount).contains(error.offset), "offset \(error.offset) outside \(inputCount) bytes")
    require(isOneShortLine(error.description), "the error is not one short line: \(error.description.utf8.count) bytes")
}

private func checkRoundTrip(_ value: JSONValue, secretKeys: Set<String>) {
    require(depth(of: value) <= JSONParser.maximumDepth, "nesting of \(depth(of: value)) accepted")
    let text = value.serialized()
    require(!text.contains(0), "serialised text holds a NUL: \(value)")
    require(String(validating: text, as: UTF8.self) != nil, "serialised text is not UTF-8: \(value)")
    let again = text.withUnsafeBytes { buffer in
        Result { () throws(JSONParseError) in try JSONParser.parse(buffer, secretKeys: secretKeys) }
    }
    guard case .success(let reparsed) = again else {
        return require(false, "serialised text does not parse: \(again)")
    }
    require(reparsed == value, "\(value) came back as \(reparsed)")
    require(reparsed.serialized() == text, "serialising \(value) is not stable")
}

private func checkDescription(of value: JSONValue) {
    let shown = value.description
    guard case .success(let parsed) = Result(catching: { () throws(JSONParseError) in try JSONValue(parsing: shown) }) else {
        return require(false, "a description is not JSON")
    }
    require(parsed == redacted(value), "a description shows more or less than the value with secrets hidden")
}

/// Nesting of arrays and objects: a scalar is 0.
private func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(depth(of:)).max() ?? 0)
    case .object(let object): 1 + (object.members.map { depth(of: $0.value) }.max() ?? 0)
    default: 0
    }
}

/// `value` with each secret made the string it was written as.
private func revealed(_ value: JSONValue) -> JSONValue {
    mapSecrets(value) { secret in .string(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) }
}

/// `value` with each secret made "(secret)", as descriptions show it.
private func redacted(_ value: JSONValue) -> JSONValue {
    mapSecrets(value) { _ in .string("(secret)") }
}

private func mapSecrets(_ value: JSONValue, _ transform: (SecretBytes) -> JSONValue) -> JSONValue {
    switch value {
    case .secret(let secret): transform(secret)
    case .array(let elements): .array(elements.map { mapSecrets($0, transform) })
    case .object(let object): .object(JSONObject(object.members.map { (key: $0.key, value: mapSecrets($0.value, transform)) }))
    default: value
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

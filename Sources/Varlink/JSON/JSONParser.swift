/// A strict, single-pass JSON parser (RFC 8259) over UTF-8 bytes.
///
/// Strict because its input comes from untrusted clients: it accepts exactly
/// one value with optional surrounding whitespace, validates UTF-8 in strings,
/// rejects duplicate keys and bounds nesting so recursion cannot exhaust the
/// stack.
///
/// A parse takes at most 64 bytes of heap per input byte, plus 64 KiB; the
/// worst input, an array of one-digit numbers, takes about 36. With the
/// 1 MiB frame limit (``FrameReader``) that bounds one call's parse.
package struct JSONParser {
    /// Deepest nesting of arrays and objects accepted.
    package static let maximumDepth = 64

    private let bytes: UnsafeRawBufferPointer
    /// Members whose string values are secrets.
    private let secretKeys: Set<String>
    private var position = 0
    private var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer, secretKeys: Set<String>) {
        self.bytes = bytes
        self.secretKeys = secretKeys
    }

    /// Parses `bytes` as one complete JSON text. The string value of a member
    /// named in `secretKeys`, at any depth, becomes ``JSONValue/secret(_:)``
    /// and is never made a `String`.
    /// - Throws: ``JSONParseError``.
    package static func parse(_ bytes: UnsafeRawBufferPointer, secretKeys: Set<String> = []) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes, secretKeys: secretKeys)
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.failure(.trailingBytes) }
        return value
    }

    // MARK: Values

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard position < bytes.count else { throw failure(.unexpectedEnd) }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case let byte: throw failure(.unexpectedByte(byte))
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        position += 1
        var members: [JSONObject.Member] = []
        var seenKeys: Set<String>?
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(JSONObject(uniqueMembers: members))
        }
        while true {
            skipWhitespace()
            let keyOffset = position
            guard try peek() == UInt8(ascii: "\"") else { throw failure(.unexpectedByte(bytes[position])) }
            let key = try parseString()
            // Small objects scan; past 16 keys a set keeps hostile input linear.
            if members.count < 16 {
                if members.contains(where: { $0.key == key }) {
                    throw JSONParseError(.duplicateKey(key), at: keyOffset)
                }
            } else {
                if seenKeys == nil { seenKeys = Set(members.map(\.key)) }
                if seenKeys?.insert(key).inserted == false {
                    throw JSONParseError(.duplicateKey(key), at: keyOffset)
                }
            }
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw failure(.unexpectedByte(bytes[position])) }
            position += 1
            let value: JSONValue
            skipWhitespace()
            if !secretKeys.isEmpty, secretKeys.contains(key), try peek() == UInt8(ascii: "\"") {
                value = .secret(try parseSecretString())
            } else {
                value = try parseValue()
            }
            members.append((key: key, value: value))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                return .object(JSONObject(uniqueMembers: members))
            case let byte: throw failure(.unexpectedByte(byte))
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return .array(elements)
            case let byte: throw failure(.unexpectedByte(byte))
            }
        }
    }

    private mutating func expect(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for index in 0..<count {
            guard position < bytes.count else { throw failure(.unexpectedEnd) }
            guard bytes[position] == expected[index] else { throw failure(.unexpectedByte(bytes[position])) }
            position += 1
        }
    }

    // MARK: Helpers shared with the string and number scanners

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > Self.maximumDepth { throw failure(.tooDeep(limit: Self.maximumDepth)) }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else { throw failure(.unexpectedEnd) }
        return bytes[position]
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    func failure(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason, at: position)
    }

    var input: UnsafeRawBufferPointer { bytes }
    var offset: Int {
        get { position }
        set { position = newValue }
    }
}

import SystemKit

extension JSONParser {
    /// Parses a string starting at its opening quote into a secret: the same
    /// rules as ``parseString()``, and the decoded bytes are zeroed once copied.
    mutating func parseSecretString() throws(JSONParseError) -> SecretBytes {
        var decoded = try parseStringBytes()
        return SecretBytes(consuming: &decoded)
    }

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(JSONParseError) -> String {
        let bytes = input
        let end = bytes.count
        let start = offset + 1
        var index = start
        // Fast path: no escapes, so the result is the input bytes as they are.
        while index < end {
            let byte = bytes[index]
            if byte == Self.quote {
                offset = index + 1
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                return String(decoding: slice.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
            }
            if byte == Self.backslash { break }
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
            index += byte < 0x80 ? 1 : try multibyteLength(at: index)
        }
        guard index < end else { throw JSONParseError(.unexpectedEnd, at: end) }
        var decoded = Array(bytes[start..<index])
        decoded.reserveCapacity(decoded.count + 16)
        offset = try decodeRest(at: index, into: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Parses a string starting at its opening quote into bytes, in a buffer
    /// sized once from the raw text (decoding only shrinks it), so no copy
    /// is left behind by a buffer that grew.
    private mutating func parseStringBytes() throws(JSONParseError) -> [UInt8] {
        let bytes = input
        let end = bytes.count
        let start = offset + 1
        var closing = start
        while closing < end, bytes[closing] != Self.quote {
            closing += bytes[closing] == Self.backslash ? 2 : 1
        }
        guard closing < end else { throw JSONParseError(.unexpectedEnd, at: end) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(closing - start)
        offset = try decodeRest(at: start, into: &decoded)
        return decoded
    }

    /// Decodes a string's text from `index` to its closing quote into `decoded`.
    /// - Returns: the index after the closing quote.
    private func decodeRest(at index: Int, into decoded: inout [UInt8]) throws(JSONParseError) -> Int {
        let bytes = input
        let end = bytes.count
        var index = index
        while true {
            guard index < end else { throw JSONParseError(.unexpectedEnd, at: end) }
            let byte = bytes[index]
            switch byte {
            case Self.quote:
                return index + 1
            case Self.backslash:
                index = try decodeEscape(at: index, into: &decoded)
            case 0..<0x20:
                throw JSONParseError(.controlCharacterInString, at: index)
            case 0x20..<0x80:
                decoded.append(byte)
                index += 1
            default:
                let length = try multibyteLength(at: index)
                decoded.append(contentsOf: bytes[index..<index + length])
                index += length
            }
        }
    }

    /// Decodes the escape at `index` (a backslash) into `decoded`.
    /// - Returns: the index after the escape.
    private func decodeEscape(at index: Int, into decoded: inout [UInt8]) throws(JSONParseError) -> Int {
        let bytes = input
        guard index + 1 < bytes.count else { throw JSONParseError(.unexpectedEnd, at: bytes.count) }
        let replacement: UInt8
        switch bytes[index + 1] {
        case UInt8(ascii: "\""): replacement = 0x22
        case UInt8(ascii: "\\"): replacement = 0x5C
        case UInt8(ascii: "/"): replacement = 0x2F
        case UInt8(ascii: "b"): replacement = 0x08
        case UInt8(ascii: "f"): replacement = 0x0C
        case UInt8(ascii: "n"): replacement = 0x0A
        case UInt8(ascii: "r"): replacement = 0x0D
        case UInt8(ascii: "t"): replacement = 0x09
        case UInt8(ascii: "u"):
            var unit = try hexQuad(at: index + 2)
            var next = index + 6
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low one.
                guard next + 1 < bytes.count, bytes[next] == Self.backslash, bytes[next + 1] == UInt8(ascii: "u")
                else { throw JSONParseError(.unpairedSurrogate, at: index) }
                let low = try hexQuad(at: next + 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.unpairedSurrogate, at: index) }
                unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                next += 6
            case 0xDC00...0xDFFF:
                throw JSONParseError(.unpairedSurrogate, at: index)
            default:
                break
            }
            Self.appendUTF8(of: unit, to: &decoded)
            return next
        default:
            throw JSONParseError(.invalidEscape, at: index)
        }
        decoded.append(replacement)
        return index + 2
    }

    /// The value of the four hex digits at `index`.
    private func hexQuad(at index: Int) throws(JSONParseError) -> UInt32 {
        let bytes = input
        var value: UInt32 = 0
        for position in index..<index + 4 {
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: bytes.count) }
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidEscape, at: position)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The length of the well-formed UTF-8 sequence starting at `index` with a
    /// byte of 0x80 or above (Unicode 15, table 3-7: no overlong forms, no
    /// surrogates, nothing past U+10FFFF).
    private func multibyteLength(at index: Int) throws(JSONParseError) -> Int {
        let bytes = input
        let lead = bytes[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONParseError(.invalidUTF8, at: index)
        }
        guard index + length <= bytes.count else { throw JSONParseError(.invalidUTF8, at: index) }
        guard secondRange.contains(bytes[index + 1]) else { throw JSONParseError(.invalidUTF8, at: index) }
        for position in index + 2..<index + length where bytes[position] & 0xC0 != 0x80 {
            throw JSONParseError(.invalidUTF8, at: index)
        }
        return length
    }

    /// Appends the UTF-8 encoding of scalar value `value` (not a surrogate).
    static func appendUTF8(of value: UInt32, to bytes: inout [UInt8]) {
        switch value {
        case 0..<0x80:
            bytes.append(UInt8(value))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | value >> 6))
            bytes.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            bytes.append(UInt8(0xE0 | value >> 12))
            bytes.append(UInt8(0x80 | value >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        default:
            bytes.append(UInt8(0xF0 | value >> 18))
            bytes.append(UInt8(0x80 | value >> 12 & 0x3F))
            bytes.append(UInt8(0x80 | value >> 6 & 0x3F))
            bytes.append(UInt8(0x80 | value & 0x3F))
        }
    }

    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
}

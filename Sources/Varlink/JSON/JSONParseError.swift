import SystemKit

/// Why a byte sequence is not acceptable JSON, and where.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package enum Reason: Equatable, Sendable {
        /// The input ended inside a value (or was empty).
        case unexpectedEnd
        /// A byte that cannot start or continue the value here.
        case unexpectedByte(UInt8)
        /// A byte sequence that is not well-formed UTF-8.
        case invalidUTF8
        /// A raw control character (below U+0020) inside a string.
        case controlCharacterInString
        /// A backslash escape JSON does not define, or a bad `\u` sequence.
        case invalidEscape
        /// A `\u` escape naming half of a surrogate pair without the other half.
        case unpairedSurrogate
        /// A number JSON's grammar does not allow (leading zero, bare `-`, `1.`).
        case invalidNumber
        /// A number too large for a `Double`.
        case numberOutOfRange
        /// An object repeats a key; which member wins would be ambiguous.
        case duplicateKey(String)
        /// Arrays and objects nest deeper than the limit.
        case tooDeep(limit: Int)
        /// Something other than whitespace follows the value.
        case trailingBytes
    }

    /// What was wrong.
    package var reason: Reason
    /// Offset of the offending byte from the start of the input.
    package var offset: Int

    /// An error for `reason` at byte `offset`.
    package init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedByte(let byte):
            let hex = String(byte, radix: 16)
            what = "unexpected byte 0x\(hex.count == 1 ? "0" + hex : hex)"
        case .invalidUTF8: what = "invalid UTF-8"
        case .controlCharacterInString: what = "unescaped control character in string"
        case .invalidEscape: what = "invalid escape sequence"
        case .unpairedSurrogate: what = "unpaired UTF-16 surrogate in \\u escape"
        case .invalidNumber: what = "malformed number"
        case .numberOutOfRange: what = "number out of range"
        case .duplicateKey(let key):
            // The key is untrusted input: keep the message to one short, safe line.
            what = "duplicate object key \"\(DisplayText.sanitized(key, limit: 64))\""
        case .tooDeep(let limit): what = "nesting deeper than \(limit) levels"
        case .trailingBytes: what = "unexpected data after the JSON value"
        }
        return "invalid JSON at byte \(offset): \(what)"
    }
}

import SystemKit

/// A JSON value (RFC 8259) as Varlink carries it.
///
/// Integers that fit in 64 bits stay exact in ``int(_:)``; other numbers are
/// ``double(_:)``. Equality is structural: `.int(1)` and `.double(1)` differ,
/// and objects compare by members regardless of order.
package enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits, exact.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string, already unescaped and valid Unicode.
    case string(String)
    /// A string that holds a secret (a password), as bytes zeroed when
    /// released. Written like ``string(_:)``; the parser makes one only for
    /// the member names it is told are secret. Never shown by `description`.
    case secret(SecretBytes)
    /// An array.
    case array([JSONValue])
    /// An object, members in order.
    case object(JSONObject)
}

extension JSONValue {
    /// Parses one complete JSON text from UTF-8 `bytes`.
    /// - Throws: ``JSONParseError`` for anything RFC 8259 does not allow, invalid
    ///   UTF-8, duplicate object keys, nesting deeper than
    ///   ``JSONParser/maximumDepth``, or bytes after the value.
    package init(parsing bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        self = try JSONParser.parse(bytes)
    }

    /// Parses one complete JSON text from UTF-8 `bytes`; the string values of
    /// members named in `secretKeys` become ``secret(_:)``, never a `String`.
    package init(parsing bytes: UnsafeRawBufferPointer, secretKeys: Set<String>) throws(JSONParseError) {
        self = try JSONParser.parse(bytes, secretKeys: secretKeys)
    }

    /// Parses one complete JSON text from UTF-8 `bytes`.
    package init(parsing bytes: [UInt8]) throws(JSONParseError) {
        // withUnsafeBytes only rethrows untyped errors, so carry the typed one out in a Result.
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(buffer) }
        }
        self = try result.get()
    }

    /// Parses one complete JSON text.
    package init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try JSONParser.parse(UnsafeRawBufferPointer(buffer)) }
        }
        self = try result.get()
    }

    /// The compact JSON text of this value, as UTF-8 bytes.
    package func serialized() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64)
        JSONSerializer.write(self, into: &bytes)
        return bytes
    }

    /// Appends the compact JSON text of this value to `bytes`.
    package func serialize(into bytes: inout [UInt8]) {
        JSONSerializer.write(self, into: &bytes)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text, with every secret shown as `"(secret)"`.
    package var description: String {
        var bytes: [UInt8] = []
        JSONSerializer.write(self, into: &bytes, secrets: .redacted)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Writes compact JSON text: no whitespace, members in order, strings escaped
/// so that the output is valid JSON and never contains a NUL byte (the Varlink
/// frame terminator).
enum JSONSerializer {
    /// How ``JSONValue/secret(_:)`` is written: as it is (on the wire) or
    /// as `"(secret)"` (in text meant for people and logs).
    enum Secrets { case written, redacted }

    static func write(_ value: JSONValue, into out: inout [UInt8], secrets: Secrets = .written) {
        switch value {
        case .null: append("null", to: &out)
        case .bool(let flag): append(flag ? "true" : "false", to: &out)
        case .int(let number): writeInteger(number, into: &out)
        case .double(let number): writeDouble(number, into: &out)
        case .string(let text): writeString(text, into: &out)
        case .secret(let secret):
            switch secrets {
            case .written: secret.withUnsafeBytes { writeString(bytes: $0.assumingMemoryBound(to: UInt8.self), into: &out) }
            case .redacted: append("\"(secret)\"", to: &out)
            }
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out, secrets: secrets)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            writeObject(object, into: &out, secrets: secrets)
        }
    }

    static func writeObject(_ object: JSONObject, into out: inout [UInt8], secrets: Secrets = .written) {
        out.append(UInt8(ascii: "{"))
        var first = true
        for member in object.members {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            writeString(member.key, into: &out)
            out.append(UInt8(ascii: ":"))
            write(member.value, into: &out, secrets: secrets)
        }
        out.append(UInt8(ascii: "}"))
    }

    static func writeString(_ text: String, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { writeString(bytes: $0, into: &out) }
    }

    /// Writes UTF-8 `bytes` as a JSON string. Invalid UTF-8 is written as it
    /// is; only a secret's bytes (which came from a valid string) take this path
    /// without passing through `String`.
    static func writeString(bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            runStart = index + 1
            appendEscape(for: byte, to: &out)
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(for byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: out.append(UInt8(ascii: "\""))
        case 0x5C: out.append(UInt8(ascii: "\\"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
    }

    static func writeInteger(_ number: Int64, into out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        // Twenty digits hold any UInt64; fill from the right, then copy once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    private static func writeDouble(_ number: Double, into out: inout [UInt8]) {
        // JSON has no NaN or infinity; null is what JavaScript writes for them.
        guard number.isFinite else {
            append("null", to: &out)
            return
        }
        // Swift prints the shortest text that reads back exactly, and its
        // forms ("1.0", "1e-05", "1e+20") are all valid JSON numbers.
        out.append(contentsOf: number.description.utf8)
    }

    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}

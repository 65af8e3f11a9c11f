/// One name inside a directory, kept as the exact bytes the kernel returned.
///
/// Linux names are bytes, not text: a name that is not valid UTF-8 must still
/// reach `openat(2)` unchanged, and must not collide with another name when
/// shown or used as a key. ``display`` is a lossless text form.
public struct FileName: Hashable, Sendable {
    /// The name's bytes, NUL-terminated, ready to pass to a `*at` system call.
    public let cString: [CChar]
    /// The name as text: itself when it is valid UTF-8 without `%` or
    /// control characters; otherwise every byte outside valid UTF-8, every
    /// `%` and every control character (C0, DEL, C1) is written `%XX`, so two
    /// different names never share a display form, and a name can never move
    /// a terminal's cursor or recolour what an administrator reads.
    /// ``init(display:)`` turns it back into the bytes.
    public let display: String

    /// A name from its bytes (without the terminating NUL).
    public init(bytes: UnsafeBufferPointer<UInt8>) {
        var storage = [CChar](repeating: 0, count: bytes.count + 1)
        storage.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
        cString = storage
        if !bytes.contains(where: { $0 == 0x25 || $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 }),
           let text = String(validating: bytes, as: UTF8.self) {
            display = text
        } else {
            display = Self.escaped(Array(bytes))
        }
    }

    /// A name from its bytes (without the terminating NUL).
    public init(bytes: [UInt8]) {
        self = bytes.withUnsafeBufferPointer { FileName(bytes: $0) }
    }

    /// A name from text.
    public init(_ string: String) {
        self.init(bytes: Array(string.utf8))
    }

    /// The name whose ``display`` form is `display`; nil when it is not one
    /// (a `%` not followed by two hex digits, or a decoded NUL or `/`).
    public init?(display: some StringProtocol) {
        var bytes: [UInt8] = []
        var utf8 = Array(display.utf8)[...]
        while let byte = utf8.popFirst() {
            guard byte == 0x25 else {
                bytes.append(byte)
                continue
            }
            guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else {
                return nil
            }
            utf8 = utf8.dropFirst(2)
            bytes.append(value)
        }
        guard !bytes.contains(0), !bytes.contains(0x2f) else { return nil }
        self.init(bytes: bytes)
    }

    /// The bytes, without the terminating NUL.
    public var bytes: [UInt8] {
        cString.dropLast().map { UInt8(bitPattern: $0) }
    }

    private static func escaped(_ raw: [UInt8]) -> String {
        var out = ""
        var index = 0
        while index < raw.count {
            let length = validSequenceLength(raw, at: index)
            if length > 0, raw[index] != 0x25, !Self.isControl(raw, at: index, length: length) {
                out += String(decoding: raw[index..<index + length], as: UTF8.self)
                index += length
            } else {
                let hex = String(raw[index], radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
                index += 1
            }
        }
        return out
    }

    /// C0 controls, DEL, and the C1 controls U+0080–U+009F (`C2 80`–`C2 9F`).
    private static func isControl(_ raw: [UInt8], at index: Int, length: Int) -> Bool {
        let lead = raw[index]
        if length == 1 { return lead < 0x20 || lead == 0x7f }
        return length == 2 && lead == 0xc2 && raw[index + 1] < 0xa0
    }

    /// The length of the valid UTF-8 sequence starting at `index`, or 0.
    private static func validSequenceLength(_ raw: [UInt8], at index: Int) -> Int {
        let lead = raw[index]
        let length: Int
        switch lead {
        case 0x00...0x7f: return 1
        case 0xc2...0xdf: length = 2
        case 0xe0...0xef: length = 3
        case 0xf0...0xf4: length = 4
        default: return 0
        }
        guard index + length <= raw.count else { return 0 }
        return String(validating: raw[index..<index + length], as: UTF8.self) == nil ? 0 : length
    }
}

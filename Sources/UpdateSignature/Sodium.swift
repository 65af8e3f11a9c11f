internal import CSodium

/// libsodium, initialized once, before its first use, by whichever thread
/// comes first (`sodium_init(3)`: 0 the first time, 1 after, -1 on failure).
enum Sodium {
    /// Whether libsodium can be used; every entry point checks it first.
    static let isReady: Bool = sodium_init() >= 0

    /// Fails with ``UpdateSignatureError/cryptoUnavailable`` when `sodium_init` did not succeed.
    static func ready() throws(UpdateSignatureError) {
        guard isReady else { throw .cryptoUnavailable }
    }

    /// Standard base64 with padding (`sodium_bin2base64`, `sodium_base64_VARIANT_ORIGINAL`).
    static func base64(_ bytes: [UInt8]) -> String {
        let capacity = (bytes.count + 2) / 3 * 4 + 1
        var text = [CChar](repeating: 0, count: capacity)
        _ = bytes.withUnsafeBufferPointer { input in
            sodium_bin2base64(&text, capacity, input.baseAddress, input.count, sodium_base64_VARIANT_ORIGINAL)
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes standard, padded base64 to exactly `count` bytes; nil for
    /// anything else: another length, a character outside the alphabet,
    /// missing padding, spaces or text after the padding, unused bits not zero
    /// (`sodium_base642bin`, `sodium_base64_VARIANT_ORIGINAL`, nothing ignored;
    /// then encoded again and compared, so one key has one spelling).
    static func bytes(base64 text: Substring.UTF8View, count: Int) -> [UInt8]? {
        let input = Array(text)
        guard !input.isEmpty, input.count <= (count + 2) / 3 * 4 else { return nil }
        var output = [UInt8](repeating: 0, count: count)
        var decoded = 0
        var end: UnsafePointer<CChar>?
        let status = input.withUnsafeBufferPointer { source in
            source.withMemoryRebound(to: CChar.self) { characters in
                sodium_base642bin(&output, count, characters.baseAddress, characters.count, nil, &decoded, &end,
                                  sodium_base64_VARIANT_ORIGINAL)
            }
        }
        guard status == 0, decoded == count, let end else { return nil }
        let consumed = input.withUnsafeBufferPointer { source in
            source.withMemoryRebound(to: CChar.self) { characters in
                characters.baseAddress.map { end - $0 } ?? -1
            }
        }
        guard consumed == input.count, base64(output).utf8.elementsEqual(input) else { return nil }
        return output
    }
}

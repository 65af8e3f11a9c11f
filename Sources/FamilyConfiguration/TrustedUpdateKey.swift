/// An update key an administrator trusts (`[Updates] TrustedKeys=`): new
/// versions of a child's app in an app root that it signs are swapped in
/// without asking a guardian, as one whose key a guardian was shown.
///
/// Checked here without a crypto library: `ed25519:` and the padded
/// base64 of exactly 32 bytes, the form `X-FamilyControls-UpdateKey=` takes.
package struct TrustedUpdateKey: Hashable, Sendable {
    /// The app it is trusted for; nil for every app.
    package var appID: String?
    /// The key, `ed25519:BASE64`.
    package var declaration: String

    /// Parses `ed25519:BASE64` or `APPID=ed25519:BASE64`.
    /// - Returns: nil when it is neither (a malformed key or app ID).
    package init?(_ token: String) {
        var appID: String?
        var key = Substring(token)
        if let equals = token.firstIndex(of: "="), !token.hasPrefix("ed25519:") {
            let id = String(token[..<equals])
            guard Self.isAppID(id) else { return nil }
            appID = id
            key = token[token.index(after: equals)...]
        }
        guard Self.isKey(key) else { return nil }
        self.appID = appID
        self.declaration = String(key)
    }

    /// `ed25519:` then 43 base64 characters and `=`, the last character
    /// carrying no bits beyond the 32nd byte (the canonical encoding).
    static func isKey(_ text: Substring) -> Bool {
        let prefix = "ed25519:"
        guard text.hasPrefix(prefix) else { return false }
        let encoded = Array(text.utf8.dropFirst(prefix.utf8.count))
        guard encoded.count == 44, encoded[43] == UInt8(ascii: "=") else { return false }
        var last: UInt8 = 0
        for byte in encoded[..<43] {
            guard let value = sextet(byte) else { return false }
            last = value
        }
        return last & 0b11 == 0
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    /// A reverse-domain app ID: letters, digits, `.`, `_`, `-`, no empty part, at most 255 bytes.
    static func isAppID(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 255,
              !text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return false }
        return text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }
}

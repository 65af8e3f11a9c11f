/// A GnuPG keyring file as Flatpak keeps one for a remote
/// (`repo/REMOTE.trustedkeys.gpg`: OpenPGP packets, RFC 4880 section 4),
/// read as hostile input: the keys it holds, each a primary public-key
/// packet and the packets after it up to the next one, and their v4
/// fingerprints. Secret-key and trust packets are dropped; a key of another
/// version has no fingerprint here and is never trusted.
package struct OpenPGPKeyringPackets: Hashable, Sendable {
    /// One key: its fingerprint (40 upper-case hex digits; nil for a version
    /// other than 4) and where its packets lie in the keyring, in order.
    package struct Key: Hashable, Sendable {
        package var fingerprint: String?
        package var packets: [Range<Int>]
    }

    package var keys: [Key]

    /// A keyring larger than this is refused (Flathub's is 1.5 KiB).
    package static let sizeLimit = 1 << 20

    /// - Throws: ``KeyringError`` when the bytes are not whole packets.
    package init(parsing bytes: [UInt8]) throws(KeyringError) {
        guard bytes.count <= Self.sizeLimit else { throw KeyringError("a keyring over \(Self.sizeLimit) bytes") }
        var keys: [Key] = []
        var index = 0
        while index < bytes.count {
            let start = index
            let header = bytes[index]
            guard header & 0x80 != 0 else { throw KeyringError("the keyring is not OpenPGP packets") }
            index += 1
            let tag: UInt8
            var length = 0
            if header & 0x40 != 0 {
                tag = header & 0x3f
                guard index < bytes.count else { throw KeyringError("a keyring packet cut short") }
                let first = Int(bytes[index])
                index += 1
                switch first {
                case 0..<192: length = first
                case 192..<224:
                    guard index < bytes.count else { throw KeyringError("a keyring packet cut short") }
                    length = ((first - 192) << 8) + Int(bytes[index]) + 192
                    index += 1
                case 255:
                    guard index + 4 <= bytes.count else { throw KeyringError("a keyring packet cut short") }
                    length = bytes[index..<(index + 4)].reduce(0) { $0 << 8 | Int($1) }
                    index += 4
                default: throw KeyringError("a keyring packet of partial length")
                }
            } else {
                tag = (header >> 2) & 0x0f
                let size = [1, 2, 4, 0][Int(header & 3)]
                guard size > 0 else { throw KeyringError("a keyring packet of indeterminate length") }
                guard index + size <= bytes.count else { throw KeyringError("a keyring packet cut short") }
                length = bytes[index..<(index + size)].reduce(0) { $0 << 8 | Int($1) }
                index += size
            }
            guard length <= bytes.count - index else { throw KeyringError("a keyring packet longer than the keyring") }
            let body = bytes[index..<(index + length)]
            index += length
            switch tag {
            case 6:
                keys.append(Key(fingerprint: Self.fingerprint(body), packets: [start..<index]))
            case 5, 7, 12:
                continue    // secret keys and GnuPG's local trust: never carried
            default:
                guard !keys.isEmpty else { throw KeyringError("a keyring packet before any key") }
                keys[keys.count - 1].packets.append(start..<index)
            }
        }
        self.keys = keys
    }

    /// The v4 fingerprint of a public-key packet's body: SHA-1 of 0x99, the
    /// body's length in two bytes, and the body (RFC 4880, 12.2).
    private static func fingerprint(_ body: ArraySlice<UInt8>) -> String? {
        guard body.first == 4, body.count <= 0xffff else { return nil }
        let digest = SHA1.digest([0x99, UInt8(body.count >> 8), UInt8(body.count & 0xff)] + body)
        return OstreeCommitObject.hex(digest[...]).uppercased()
    }
}

/// Why a keyring is refused: what is wrong with its packets, never their bytes.
package struct KeyringError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

internal import CSodium
import SystemKit

/// The canonical list of what a version of an app holds, the text its
/// signature covers: every entry's path relative to the version's folder,
/// kind, permission bits, and a regular file's size and BLAKE2b-256 hash, or
/// a symbolic link's target; sorted by path bytes.
///
/// One line per entry, so no name or target may hold a control character:
///
///     familycontrols-manifest-v1
///     d 0755 0 - 3:bin 0:
///     f 0755 10240 <64 hex digits> 7:bin/app 0:
///     l 0777 0 - 8:bin/link 3:app
///
/// The signature file itself, ``signatureFileName`` at the top, is left out.
public struct UpdateManifest: Hashable, Sendable {
    /// The detached signature shipped at the top of a signed version.
    public static let signatureFileName = ".familycontrols-signature"
    static let header = "familycontrols-manifest-v1\n"
    /// What is signed: this, then the manifest's BLAKE2b-256 digest, so a
    /// signature of anything else can never pass for a version's.
    static let signingContext = "familycontrols-update-manifest-v1\n"

    /// One entry of the version.
    public struct Entry: Hashable, Sendable {
        /// What an entry is; nothing else is allowed in a version.
        public enum Kind: Hashable, Sendable {
            case directory
            case file(size: UInt64, hash: [UInt8])
            case symbolicLink(target: [UInt8])
        }

        /// The path inside the version, `/`-separated, as bytes.
        public var path: [UInt8]
        /// The permission bits, `st_mode & 07777`.
        public var permissions: UInt32
        public var kind: Kind
    }

    /// The bounds of a walk, so a hostile tree costs bounded memory.
    public struct Limits: Hashable, Sendable {
        public var maximumEntries: Int
        public var maximumDepth: Int
        /// The bytes of every file together: what a walk reads and hashes at
        /// most, so a huge (or sparse) file costs bounded time.
        public var maximumBytes: UInt64
        public init(maximumEntries: Int = 500_000, maximumDepth: Int = 128, maximumBytes: UInt64 = 8 << 30) {
            self.maximumEntries = maximumEntries
            self.maximumDepth = maximumDepth
            self.maximumBytes = maximumBytes
        }
    }

    /// The entries, sorted by path bytes.
    public let entries: [Entry]

    init(entries: [Entry]) {
        self.entries = entries.sorted { $0.path.lexicographicallyPrecedes($1.path) }
    }

    /// The canonical text.
    public var text: [UInt8] {
        var text = Array(Self.header.utf8)
        for entry in entries { Self.append(entry, to: &text) }
        return text
    }

    /// The BLAKE2b-256 digest of ``text`` (`crypto_generichash`): which
    /// version this is, as an update request shows it.
    public var digest: [UInt8] {
        let text = text
        var digest = [UInt8](repeating: 0, count: 32)
        _ = crypto_generichash(&digest, digest.count, text, UInt64(text.count), nil, 0)
        return digest
    }

    /// The message an update's signature covers: ``signingContext`` and ``digest``.
    var signedMessage: [UInt8] {
        Array(Self.signingContext.utf8) + digest
    }

    private static func append(_ entry: Entry, to text: inout [UInt8]) {
        let mode = String(entry.permissions, radix: 8)
        let padded = String(repeating: "0", count: max(0, 4 - mode.count)) + mode
        var target: [UInt8] = []
        let fields: String
        switch entry.kind {
        case .directory:
            fields = "d \(padded) 0 -"
        case .file(let size, let hash):
            fields = "f \(padded) \(size) \(hexadecimal(hash))"
        case .symbolicLink(let linkTarget):
            fields = "l \(padded) 0 -"
            target = linkTarget
        }
        text += Array("\(fields) \(entry.path.count):".utf8) + entry.path
        text += Array(" \(target.count):".utf8) + target + [UInt8(ascii: "\n")]
    }

    private static func hexadecimal(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]] }
        return String(decoding: text, as: UTF8.self)
    }
}

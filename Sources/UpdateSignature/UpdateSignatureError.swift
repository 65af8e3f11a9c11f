import SystemKit

/// Why a staged version of an app is not accepted as signed, or why a key,
/// a signature or a version's files cannot be used; each case says what to fix.
public enum UpdateSignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libsodium could not be initialized (`sodium_init` failed).
    case cryptoUnavailable
    /// A key declaration is not `ed25519:` followed by the base64 of 32 bytes.
    case malformedKey(String)
    /// A secret key file is not `ed25519-secret:` followed by the base64 of 64 bytes.
    case malformedSecretKey
    /// The version has no signature file, or it is not a regular file.
    case missingSignature
    /// The signature file is not the 64 bytes of one Ed25519 signature.
    case malformedSignature(size: Int)
    /// The signature is not the approved key's over this manifest: a file was
    /// changed, added, removed, renamed or re-moded, or another key signed it.
    case signatureMismatch
    /// An entry is neither a regular file, a directory nor a symbolic link.
    case specialFile(path: String)
    /// A regular file has more than one name, so it may be a file outside the tree.
    case hardLink(path: String)
    /// A name or a link target holds a control character (newline included).
    case controlCharacter(path: String)
    /// An entry changed kind or identity while it was being read.
    case changedWhileReading(path: String)
    /// The version holds more entries than a manifest may list.
    case tooManyEntries(limit: Int)
    /// The version's folders nest deeper than a manifest may go.
    case tooDeep(path: String, limit: Int)
    /// The version's files hold more bytes together than a manifest may hash.
    case tooLarge(limit: UInt64)
    /// An entry could not be read.
    case unreadable(path: String, Errno)

    public var description: String {
        switch self {
        case .cryptoUnavailable:
            "libsodium could not be initialized (sodium_init failed)"
        case .malformedKey(let problem):
            "the update key is not usable: \(problem) (expected ed25519: and the base64 of a 32-byte Ed25519 public key)"
        case .malformedSecretKey:
            "the secret key file is not ed25519-secret: and the base64 of a 64-byte Ed25519 secret key"
        case .missingSignature:
            "the version has no signature (\(UpdateManifest.signatureFileName), a regular file at its top)"
        case .malformedSignature(let size):
            "\(UpdateManifest.signatureFileName) holds \(size) bytes, not one 64-byte Ed25519 signature"
        case .signatureMismatch:
            "the signature does not match: the version's files are not the ones a trusted key signed"
        case .specialFile(let path):
            "\(path) is not a regular file, folder or symbolic link; a version may hold only those"
        case .hardLink(let path):
            "\(path) has more than one name (a hard link); a version may not share files with anything"
        case .controlCharacter(let path):
            "\(path) holds a control character in its name or link target"
        case .changedWhileReading(let path):
            "\(path) changed while it was being read"
        case .tooManyEntries(let limit):
            "the version holds more than \(limit) entries"
        case .tooDeep(let path, let limit):
            "\(path) is nested more than \(limit) folders deep"
        case .tooLarge(let limit):
            "the version's files hold more than \(limit >> 30) GiB together"
        case .unreadable(let path, let error):
            "\(path) cannot be read: \(error)"
        }
    }
}

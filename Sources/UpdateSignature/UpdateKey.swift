internal import CSodium

/// The Ed25519 public key an app declares for its updates, in its desktop
/// entry: `X-FamilyControls-UpdateKey=ed25519:BASE64`, the base64 (standard
/// alphabet, padded) of the 32-byte key. A version of the app signed by the
/// secret half may replace the approved one.
public struct UpdateKey: Hashable, Sendable {
    /// The desktop entry key that declares it.
    public static let desktopEntryKey = "X-FamilyControls-UpdateKey"
    /// What a declaration starts with: the algorithm, the only one accepted.
    public static let algorithmPrefix = "ed25519:"
    /// The size of an Ed25519 public key (`crypto_sign_PUBLICKEYBYTES`).
    public static let byteCount = 32

    /// The key's 32 bytes.
    public let bytes: [UInt8]

    /// A key from its 32 bytes.
    /// - Throws: ``UpdateSignatureError/malformedKey(_:)`` for another length.
    public init(bytes: [UInt8]) throws(UpdateSignatureError) {
        guard bytes.count == Self.byteCount else { throw .malformedKey("it is \(bytes.count) bytes, not \(Self.byteCount)") }
        self.bytes = bytes
    }

    /// Parses the value of `X-FamilyControls-UpdateKey=` strictly: `ed25519:`
    /// then exactly the padded base64 of 32 bytes; nothing before, between or
    /// after (the desktop entry's reader has already trimmed the line).
    /// - Throws: ``UpdateSignatureError/malformedKey(_:)`` saying what is wrong.
    public init(declaration: some StringProtocol) throws(UpdateSignatureError) {
        try Sodium.ready()
        let text = Substring(declaration).utf8
        guard text.starts(with: Self.algorithmPrefix.utf8) else {
            throw .malformedKey("it does not start with \(Self.algorithmPrefix)")
        }
        let encoded = text.dropFirst(Self.algorithmPrefix.utf8.count)
        guard let bytes = Sodium.bytes(base64: encoded, count: Self.byteCount) else {
            throw .malformedKey("what follows \(Self.algorithmPrefix) is not the padded base64 of \(Self.byteCount) bytes")
        }
        self.bytes = bytes
    }

    /// The declaration to write in the desktop entry's value: `ed25519:BASE64`.
    public var declaration: String { Self.algorithmPrefix + Sodium.base64(bytes) }

    /// Whether `signature` is this key's Ed25519 signature of `message`
    /// (`crypto_sign_verify_detached`).
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard Sodium.isReady, signature.count == Int(crypto_sign_BYTES) else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), bytes) == 0
    }
}

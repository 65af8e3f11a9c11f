internal import CSodium

/// The secret half of an app's update key, kept by the app's developer and
/// never shipped: signs each version of the app.
///
/// Its file holds one line, `ed25519-secret:BASE64`, the base64 of
/// libsodium's 64-byte secret key (seed, then public key). The bytes are
/// zeroed when the value is released (`sodium_memzero`).
public final class UpdateSigningKey {
    /// What the secret key file's line starts with.
    public static let filePrefix = "ed25519-secret:"
    private static let byteCount = Int(crypto_sign_SECRETKEYBYTES)

    private var secret: [UInt8]
    /// The public half, to declare in the desktop entry.
    public let publicKey: UpdateKey

    private init(secret: [UInt8], publicKey: UpdateKey) {
        self.secret = secret
        self.publicKey = publicKey
    }

    deinit { sodium_memzero(&secret, secret.count) }

    /// A new random key pair (`crypto_sign_keypair`).
    public static func generate() throws(UpdateSignatureError) -> UpdateSigningKey {
        try Sodium.ready()
        var secret = [UInt8](repeating: 0, count: byteCount)
        var public_ = [UInt8](repeating: 0, count: UpdateKey.byteCount)
        guard crypto_sign_keypair(&public_, &secret) == 0 else { throw .cryptoUnavailable }
        return UpdateSigningKey(secret: secret, publicKey: try UpdateKey(bytes: public_))
    }

    /// The key in a secret key file's text: `ed25519-secret:BASE64`, one line.
    /// - Throws: ``UpdateSignatureError/malformedSecretKey`` for anything else,
    ///   or when its public half does not belong to its seed.
    public init(fileText text: [UInt8]) throws(UpdateSignatureError) {
        try Sodium.ready()
        var line = text[...]
        if line.last == UInt8(ascii: "\n") { line = line.dropLast() }
        let prefix = Array(Self.filePrefix.utf8)
        guard line.starts(with: prefix) else { throw .malformedSecretKey }
        let encoded = String(decoding: line.dropFirst(prefix.count), as: UTF8.self)
        guard var secret = Sodium.bytes(base64: Substring(encoded).utf8, count: Self.byteCount) else {
            throw .malformedSecretKey
        }
        // The public half stored in the file must be the seed's own
        // (`crypto_sign_ed25519_sk_to_pk` only copies it out).
        var seed = [UInt8](repeating: 0, count: Int(crypto_sign_SEEDBYTES))
        var derived = [UInt8](repeating: 0, count: UpdateKey.byteCount)
        var rederived = [UInt8](repeating: 0, count: Self.byteCount)
        let derivedOK = crypto_sign_ed25519_sk_to_seed(&seed, secret) == 0
            && crypto_sign_seed_keypair(&derived, &rederived, seed) == 0
        sodium_memzero(&seed, seed.count)
        sodium_memzero(&rederived, rederived.count)
        guard derivedOK, derived.elementsEqual(secret[(Self.byteCount - UpdateKey.byteCount)...]) else {
            sodium_memzero(&secret, secret.count)
            throw .malformedSecretKey
        }
        self.secret = secret
        self.publicKey = try UpdateKey(bytes: derived)
    }

    /// The secret key file's text (mode 0600 is the writer's business).
    public var fileText: [UInt8] { Array((Self.filePrefix + Sodium.base64(secret) + "\n").utf8) }

    /// The detached Ed25519 signature of `message` (`crypto_sign_detached`).
    func signature(of message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secret)
        return signature
    }
}

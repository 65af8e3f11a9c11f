#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Signs a version of an app, and decides whether a staged version is
/// signed by a given key: the detached Ed25519 signature in
/// ``UpdateManifest/signatureFileName`` over the version's manifest.
///
/// Which key to verify with is the caller's decision, and the only one that
/// makes an update authentic: the key the *approved* version declares, never
/// one the staged version brings.
public enum UpdateSignature {
    /// The signature file's size (`crypto_sign_BYTES`).
    public static let byteCount = 64

    /// The manifest of the version in `directory`, if `key` signed it.
    /// - Throws: ``UpdateSignatureError``: ``UpdateSignatureError/missingSignature``,
    ///   ``UpdateSignatureError/malformedSignature(size:)``,
    ///   ``UpdateSignatureError/signatureMismatch``, or why the manifest could not be made.
    public static func verify(_ directory: FileDescriptor, with key: UpdateKey,
                              limits: UpdateManifest.Limits = UpdateManifest.Limits())
        throws(UpdateSignatureError) -> UpdateManifest {
        let signature = try readSignature(in: directory)
        let manifest = try UpdateManifest.compute(of: directory, limits: limits)
        guard key.verifies(signature, of: manifest.signedMessage) else { throw .signatureMismatch }
        return manifest
    }

    /// The manifest of the version in `directory`, and which of `keys`
    /// signed it: the manifest is made once, whatever the number of keys.
    /// - Throws: as ``verify(_:with:limits:)``; ``UpdateSignatureError/signatureMismatch``
    ///   when none of `keys` (or no key at all) signed it.
    public static func verify(_ directory: FileDescriptor, withAnyOf keys: [UpdateKey],
                              limits: UpdateManifest.Limits = UpdateManifest.Limits())
        throws(UpdateSignatureError) -> (manifest: UpdateManifest, key: UpdateKey) {
        let signature = try readSignature(in: directory)
        let manifest = try UpdateManifest.compute(of: directory, limits: limits)
        let message = manifest.signedMessage
        guard let key = keys.first(where: { $0.verifies(signature, of: message) }) else { throw .signatureMismatch }
        return (manifest, key)
    }

    /// The signature of the version in `directory` by `key`, to write as its
    /// ``UpdateManifest/signatureFileName``.
    public static func sign(_ directory: FileDescriptor, with key: UpdateSigningKey,
                            limits: UpdateManifest.Limits = UpdateManifest.Limits())
        throws(UpdateSignatureError) -> [UInt8] {
        key.signature(of: try UpdateManifest.compute(of: directory, limits: limits).signedMessage)
    }

    /// Signs the version in `directory` and writes its signature file there
    /// (replacing one already there, by rename).
    public static func signInPlace(_ directory: FileDescriptor, with key: UpdateSigningKey) throws(UpdateSignatureError) {
        let temporary = FileName(UpdateManifest.signatureFileName + ".new")
        // One left by an interrupted run would be signed, then renamed away.
        if unlinkat(directory.rawValue, temporary.cString, 0) != 0, errno != ENOENT {
            throw .unreadable(path: temporary.display, Errno(errno, operation: "unlinkat"))
        }
        let signature = try sign(directory, with: key)
        do {
            let file = try directory.openChild(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW)
            defer { file.close() }
            try file.changeMode(0o644)
            try file.writeAll(signature)
            _ = try retryingOnInterrupt("renameat") {
                renameat(directory.rawValue, temporary.cString, directory.rawValue, FileName(UpdateManifest.signatureFileName).cString)
            }
        } catch {
            throw .unreadable(path: UpdateManifest.signatureFileName, error)
        }
    }

    private static func readSignature(in directory: FileDescriptor) throws(UpdateSignatureError) -> [UInt8] {
        let file: FileDescriptor
        do {
            file = try directory.openChild(FileName(UpdateManifest.signatureFileName),
                                           flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch {
            if error.rawValue == ENOENT || error.rawValue == ELOOP { throw .missingSignature }
            throw .unreadable(path: UpdateManifest.signatureFileName, error)
        }
        defer { file.close() }
        let bytes: [UInt8]
        do throws(Errno) {
            guard try file.status().type == .regular else { throw Errno(EINVAL, operation: "fstat") }
            bytes = try file.readAll(limit: byteCount + 1)
        } catch {
            throw error.rawValue == EINVAL ? .missingSignature : .unreadable(path: UpdateManifest.signatureFileName, error)
        }
        guard bytes.count == byteCount else { throw .malformedSignature(size: bytes.count) }
        return bytes
    }
}

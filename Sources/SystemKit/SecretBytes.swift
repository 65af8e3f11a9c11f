#if canImport(Glibc)
import Glibc
#endif

/// Bytes of a secret (a password), kept in one heap buffer that is zeroed with
/// `explicit_bzero(3)` as soon as the value is released.
///
/// Swift `String`s are copied freely and never zeroed, so secrets travel as this
/// type from the place they are read to the PAM conversation, and no further.
/// Not thread-safe: one owner at a time.
public final class SecretBytes {
    private let storage: UnsafeMutableRawBufferPointer
    /// Number of bytes of the secret.
    public let count: Int

    /// Copies `bytes` into a fresh buffer. The caller zeroes its own copy.
    public init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        storage = .allocate(byteCount: max(count, 1), alignment: 1)
        if let base = bytes.baseAddress, count > 0 {
            storage.baseAddress?.copyMemory(from: base, byteCount: count)
        }
    }

    /// Copies the UTF-8 of `text`. Prefer ``init(copying:)``: the string itself
    /// cannot be zeroed.
    public convenience init(_ text: String) {
        var copy = Array(text.utf8)
        self.init(copying: copy.withUnsafeBytes { $0 })
        copy.withUnsafeMutableBytes { SecretBytes.zero($0) }
    }

    deinit {
        SecretBytes.zero(storage)
        storage.deallocate()
    }

    /// Lends the bytes for the duration of `body`.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Zeroes `buffer` in a way the compiler cannot drop.
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        explicit_bzero(base, buffer.count)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Bytes of a secret (a password), kept in one heap buffer that is zeroed with
/// `explicit_bzero(3)` as soon as the value is released.
///
/// Swift `String`s are copied freely and never zeroed, so secrets travel as this
/// type from the place they are read to the PAM conversation, and no further.
/// Sendable because the bytes never change after `init`: they are only read,
/// then zeroed by `deinit` once no one holds the value.
public final class SecretBytes: @unchecked Sendable, Equatable {
    private let storage: UnsafeMutableRawBufferPointer
    /// Number of bytes of the secret.
    public let count: Int

    /// A buffer of `count` bytes that `fill` writes, once.
    private init(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) {
        self.count = count
        storage = .allocate(byteCount: max(count, 1), alignment: 1)
        fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// Copies `bytes` into a fresh buffer. The caller zeroes its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { $0.copyMemory(from: bytes) }
    }

    /// Copies the UTF-8 of `text`, straight from the string's storage. Prefer
    /// ``init(copying:)``: the string itself cannot be zeroed.
    public convenience init(_ text: String) {
        var text = text
        self.init(count: text.utf8.count) { destination in
            text.withUTF8 { destination.copyMemory(from: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Takes the bytes of `bytes` and zeroes the array: for bytes decoded into
    /// a scratch array (an escaped JSON string) that must not linger.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(count: bytes.count) { destination in
            bytes.withUnsafeBytes { destination.copyMemory(from: $0) }
        }
        bytes.withUnsafeMutableBytes { SecretBytes.zero($0) }
    }

    /// Equal when the bytes are; for tests and value comparisons, not for
    /// checking a password (PAM does that).
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.count == rhs.count && lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in left.elementsEqual(right) } }
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

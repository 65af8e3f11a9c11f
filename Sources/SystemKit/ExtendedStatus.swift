#if canImport(Glibc)
import Glibc
#endif

/// A file's status plus the inode attributes `statx(2)` reports without
/// opening the file.
public struct ExtendedStatus: Hashable, Sendable {
    public var status: FileStatus
    /// Whether `STATX_ATTR_IMMUTABLE` is set, or nil when the filesystem does
    /// not report it (then ask `FS_IOC_GETFLAGS` on an open descriptor).
    public var isImmutable: Bool?

    public init(status: FileStatus, isImmutable: Bool?) {
        self.status = status
        self.isImmutable = isImmutable
    }
}

extension FileDescriptor {
    // From <linux/stat.h>; the layout of struct statx is fixed kernel ABI.
    private static let statxBasicStats: CUnsignedInt = 0x7ff
    private static let statxAttributeImmutable: UInt64 = 0x10
    private static let statxSize = 256

    /// The status and immutable attribute of `name` inside this directory, not
    /// following a symbolic link (`statx(2)` with `AT_SYMLINK_NOFOLLOW`).
    ///
    /// Falls back to `fstatat(2)`, without the attribute, where the C library
    /// has no `statx`.
    public func extendedStatus(of name: FileName) throws(Errno) -> ExtendedStatus {
        guard let statx = GlibcExtras.statx else {
            return ExtendedStatus(status: try status(of: name), isImmutable: nil)
        }
        return try withUnsafeTemporaryAllocation(byteCount: Self.statxSize, alignment: 8) { (buffer) throws(Errno) in
            guard let base = buffer.baseAddress else { throw Errno(EFAULT, operation: "statx") }
            _ = try retryingOnInterrupt("statx") {
                statx(rawValue, name.cString, AT_SYMLINK_NOFOLLOW, Self.statxBasicStats, base)
            }
            return Self.decodeStatx(base)
        }
    }

    /// Reads `struct statx` at its fixed kernel ABI offsets.
    private static func decodeStatx(_ buffer: UnsafeMutableRawPointer) -> ExtendedStatus {
        let attributes = buffer.load(fromByteOffset: 8, as: UInt64.self)
        let attributesMask = buffer.load(fromByteOffset: 56, as: UInt64.self)
        let status = FileStatus(
            device: FileStatus.device(
                major: buffer.load(fromByteOffset: 136, as: UInt32.self),
                minor: buffer.load(fromByteOffset: 140, as: UInt32.self)
            ),
            inode: buffer.load(fromByteOffset: 32, as: UInt64.self),
            mode: UInt32(buffer.load(fromByteOffset: 28, as: UInt16.self)),
            uid: buffer.load(fromByteOffset: 20, as: UInt32.self),
            gid: buffer.load(fromByteOffset: 24, as: UInt32.self),
            linkCount: UInt64(buffer.load(fromByteOffset: 16, as: UInt32.self))
        )
        let reported = attributesMask & statxAttributeImmutable != 0
        return ExtendedStatus(status: status, isImmutable: reported ? attributes & statxAttributeImmutable != 0 : nil)
    }
}

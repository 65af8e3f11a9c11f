#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// The type of a mounted filesystem, from `statfs(2)`'s `f_type` magic number.
///
/// The numbers are `<linux/magic.h>`'s, through CSystem.
public struct FileSystemType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let ext4 = FileSystemType(rawValue: CSYSTEM_EXT4_SUPER_MAGIC)
    public static let btrfs = FileSystemType(rawValue: CSYSTEM_BTRFS_SUPER_MAGIC)
    public static let xfs = FileSystemType(rawValue: CSYSTEM_XFS_SUPER_MAGIC)
    public static let tmpfs = FileSystemType(rawValue: CSYSTEM_TMPFS_MAGIC)
    public static let ramfs = FileSystemType(rawValue: CSYSTEM_RAMFS_MAGIC)
    public static let nfs = FileSystemType(rawValue: CSYSTEM_NFS_SUPER_MAGIC)
    public static let fuse = FileSystemType(rawValue: CSYSTEM_FUSE_SUPER_MAGIC)
    public static let overlay = FileSystemType(rawValue: CSYSTEM_OVERLAYFS_SUPER_MAGIC)

    /// A short name (`tmpfs`, `nfs`), or the magic number in hex.
    public var description: String {
        guard let name = csystem_filesystem_name(rawValue) else { return "0x" + String(rawValue, radix: 16) }
        return String(cString: name)
    }
}

extension FileDescriptor {
    /// The type of the filesystem holding the open file (`fstatfs(2)`).
    public func fileSystemType() throws(Errno) -> FileSystemType {
        var type: UInt64 = 0
        _ = try retryingOnInterrupt("fstatfs") { csystem_fstatfs_type(rawValue, &type) }
        return FileSystemType(rawValue: type)
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// What `stat(2)` says about one file: identity, kind, owner and permission bits.
///
/// Maps to `struct stat`, as filled by `fstat(2)`, `fstatat(2)` or `statx(2)`.
public struct FileStatus: Hashable, Sendable {
    /// The kind of file, from the `S_IFMT` bits of `st_mode`.
    public enum FileType: Hashable, Sendable {
        case directory, regular, symbolicLink, other
    }

    /// `st_dev`, in glibc's `makedev` encoding.
    public var device: UInt64
    /// `st_ino`.
    public var inode: UInt64
    /// `st_mode`: file type and permission bits.
    public var mode: UInt32
    /// `st_uid`.
    public var uid: UInt32
    /// `st_gid`.
    public var gid: UInt32
    /// `st_nlink`.
    public var linkCount: UInt64

    public init(device: UInt64, inode: UInt64, mode: UInt32, uid: UInt32, gid: UInt32, linkCount: UInt64) {
        self.device = device
        self.inode = inode
        self.mode = mode
        self.uid = uid
        self.gid = gid
        self.linkCount = linkCount
    }

    /// Copies the fields of a `struct stat`.
    public init(_ raw: stat) {
        self.init(
            device: UInt64(truncatingIfNeeded: raw.st_dev),
            inode: UInt64(truncatingIfNeeded: raw.st_ino),
            mode: UInt32(truncatingIfNeeded: raw.st_mode),
            uid: UInt32(truncatingIfNeeded: raw.st_uid),
            gid: UInt32(truncatingIfNeeded: raw.st_gid),
            linkCount: UInt64(truncatingIfNeeded: raw.st_nlink)
        )
    }

    /// The permission bits (`st_mode & 07777`): setuid, setgid, sticky and rwx.
    public var permissions: UInt32 { mode & Self.permissionBits }

    private static let permissionBits = UInt32(S_ISUID | S_ISGID | S_ISVTX | S_IRWXU | S_IRWXG | S_IRWXO)

    /// The kind of file.
    public var type: FileType {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFDIR): .directory
        case UInt32(S_IFREG): .regular
        case UInt32(S_IFLNK): .symbolicLink
        default: .other
        }
    }

    /// Whether this is the same file as `other` (same device and inode).
    public func isSameFile(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }

    /// Combines major and minor numbers with glibc's `makedev(3)`, so
    /// `statx(2)` results compare equal to `st_dev`.
    public static func device(major: UInt32, minor: UInt32) -> UInt64 {
        csystem_makedev(major, minor)
    }
}

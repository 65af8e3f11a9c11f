#if canImport(Glibc)
import Glibc
#endif

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
    public var permissions: UInt32 { mode & 0o7777 }

    /// The kind of file.
    public var type: FileType {
        switch mode & 0o170000 {
        case 0o040000: .directory
        case 0o100000: .regular
        case 0o120000: .symbolicLink
        default: .other
        }
    }

    /// Whether this is the same file as `other` (same device and inode).
    public func isSameFile(as other: FileStatus) -> Bool {
        device == other.device && inode == other.inode
    }

    /// Combines major and minor numbers the way glibc's `makedev(3)` does, so
    /// `statx(2)` results compare equal to `st_dev`.
    public static func device(major: UInt32, minor: UInt32) -> UInt64 {
        let major = UInt64(major), minor = UInt64(minor)
        return ((major & 0xffff_f000) << 32) | ((major & 0x0000_0fff) << 8)
            | ((minor & 0xffff_ff00) << 12) | (minor & 0x0000_00ff)
    }
}

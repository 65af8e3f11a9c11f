#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Inode flags, as `chattr(1)` and `lsattr(1)` show them.
///
/// Maps to the `FS_*_FL` constants of `<linux/fs.h>` and the
/// `FS_IOC_GETFLAGS` / `FS_IOC_SETFLAGS` ioctls (`ioctl_iflags(2)`).
public struct FileFlags: OptionSet, Hashable, Sendable {
    public let rawValue: CInt
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// `FS_IMMUTABLE_FL`: no writes, no renames, no unlinks, no links, no
    /// owner or mode changes, even by root without `CAP_LINUX_IMMUTABLE`.
    public static let immutable = FileFlags(rawValue: CSYSTEM_FS_IMMUTABLE_FL)
    /// `FS_APPEND_FL`: writes may only append.
    public static let appendOnly = FileFlags(rawValue: CSYSTEM_FS_APPEND_FL)
}

extension FileDescriptor {
    /// The inode flags of the open file (`ioctl(FS_IOC_GETFLAGS)`).
    ///
    /// Needs a descriptor opened for reading: `O_PATH` descriptors fail with `EBADF`.
    /// - Throws: ``Errno``; `ENOTTY`, `EOPNOTSUPP` or `EINVAL` when the
    ///   filesystem has no inode flags.
    public func flags() throws(Errno) -> FileFlags {
        var value: CInt = 0
        _ = try retryingOnInterrupt("ioctl FS_IOC_GETFLAGS") { csystem_get_inode_flags(rawValue, &value) }
        return FileFlags(rawValue: value)
    }

    /// Replaces the inode flags of the open file (`ioctl(FS_IOC_SETFLAGS)`).
    ///
    /// Read the flags first and change only the bits you mean to: the call
    /// sets the whole word.
    /// - Throws: ``Errno``; `EPERM` without `CAP_LINUX_IMMUTABLE`.
    public func setFlags(_ flags: FileFlags) throws(Errno) {
        var value = flags.rawValue
        _ = try retryingOnInterrupt("ioctl FS_IOC_SETFLAGS") { csystem_set_inode_flags(rawValue, &value) }
    }
}

extension Errno {
    /// Whether this error says the filesystem has no inode flags at all.
    public var meansFlagsUnsupported: Bool {
        rawValue == ENOTTY || rawValue == EOPNOTSUPP || rawValue == EINVAL || rawValue == ENOSYS
    }
}

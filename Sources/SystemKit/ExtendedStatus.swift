#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

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
    /// The status and immutable attribute of `name` inside this directory, not
    /// following a symbolic link (`statx(2)` with `AT_SYMLINK_NOFOLLOW`).
    ///
    /// Falls back to `fstatat(2)`, without the attribute, where the kernel
    /// has no `statx` (`ENOSYS`, before Linux 4.11).
    public func extendedStatus(of name: FileName) throws(Errno) -> ExtendedStatus {
        var raw = statx()
        do {
            _ = try retryingOnInterrupt("statx") {
                csystem_statx(rawValue, name.cString, AT_SYMLINK_NOFOLLOW, CSYSTEM_STATX_BASIC_STATS, &raw)
            }
        } catch where error.rawValue == ENOSYS {
            return ExtendedStatus(status: try status(of: name), isImmutable: nil)
        }
        return ExtendedStatus(raw)
    }
}

extension ExtendedStatus {
    /// Copies the fields of a `struct statx`.
    fileprivate init(_ raw: statx) {
        let status = FileStatus(
            device: FileStatus.device(major: raw.stx_dev_major, minor: raw.stx_dev_minor),
            inode: raw.stx_ino,
            mode: UInt32(raw.stx_mode),
            uid: raw.stx_uid,
            gid: raw.stx_gid,
            linkCount: UInt64(raw.stx_nlink)
        )
        let immutable = CSYSTEM_STATX_ATTR_IMMUTABLE
        let reported = raw.stx_attributes_mask & immutable != 0
        self.init(status: status, isImmutable: reported ? raw.stx_attributes & immutable != 0 : nil)
    }
}

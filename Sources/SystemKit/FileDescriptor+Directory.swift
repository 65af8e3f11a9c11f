#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Calls relative to an open directory, and on the open file itself, so a
/// caller never resolves a full path twice.
///
/// Errors name the system call only; callers add the path they know.
extension FileDescriptor {
    /// Opens `name` inside this directory (`openat(2)`). `O_CLOEXEC` is always added.
    /// `O_PATH` (`open(2)`): a descriptor that names a file without opening
    /// it for reading, enough to run it (`execveat`) or `fstat` it.
    public static let pathOnly: CInt = CSYSTEM_O_PATH

    public func openChild(_ name: FileName, flags: CInt) throws(Errno) -> FileDescriptor {
        let fd = try retryingOnInterrupt("openat") { openat(rawValue, name.cString, flags | O_CLOEXEC) }
        return FileDescriptor(taking: fd)
    }

    /// The open file's status (`fstat(2)`).
    public func status() throws(Errno) -> FileStatus {
        var raw = stat()
        _ = try retryingOnInterrupt("fstat") { fstat(rawValue, &raw) }
        return FileStatus(raw)
    }

    /// The size in bytes of the file open here (`fstat(2)`'s `st_size`): how
    /// much a reader is about to be handed, checked before it is.
    public func byteCount() throws(Errno) -> Int64 {
        var raw = stat()
        _ = try retryingOnInterrupt("fstat") { fstat(rawValue, &raw) }
        return Int64(raw.st_size)
    }

    /// The status of `name` inside this directory, not following a symbolic
    /// link (`fstatat(2)` with `AT_SYMLINK_NOFOLLOW`).
    public func status(of name: FileName) throws(Errno) -> FileStatus {
        var raw = stat()
        _ = try retryingOnInterrupt("fstatat") { fstatat(rawValue, name.cString, &raw, AT_SYMLINK_NOFOLLOW) }
        return FileStatus(raw)
    }

    /// Changes the open file's owner and group (`fchown(2)`); nil leaves one as it is.
    ///
    /// The kernel clears the setuid bit, and the setgid bit of group-executable
    /// files, on any owner change of a non-directory: set the mode afterwards.
    public func changeOwner(uid: UInt32?, gid: UInt32?) throws(Errno) {
        _ = try retryingOnInterrupt("fchown") { fchown(rawValue, uid ?? UInt32.max, gid ?? UInt32.max) }
    }

    /// Changes the open file's permission bits (`fchmod(2)`).
    public func changeMode(_ permissions: UInt32) throws(Errno) {
        _ = try retryingOnInterrupt("fchmod") { fchmod(rawValue, mode_t(permissions)) }
    }

    /// Changes the owner of `name` inside this directory without following a
    /// symbolic link (`fchownat(2)` with `AT_SYMLINK_NOFOLLOW`); nil leaves one as it is.
    public func changeOwner(of name: FileName, uid: UInt32?, gid: UInt32?) throws(Errno) {
        _ = try retryingOnInterrupt("fchownat") {
            fchownat(rawValue, name.cString, uid ?? UInt32.max, gid ?? UInt32.max, AT_SYMLINK_NOFOLLOW)
        }
    }

    /// Changes the permission bits of `name` inside this directory (`fchmodat(2)`).
    ///
    /// This follows a symbolic link: Linux links have no mode of their own, and
    /// glibc's `AT_SYMLINK_NOFOLLOW` emulation needs `/proc`. Call it only for a
    /// name known not to be a link, in a directory nobody else can change.
    public func changeMode(of name: FileName, _ permissions: UInt32) throws(Errno) {
        _ = try retryingOnInterrupt("fchmodat") { fchmodat(rawValue, name.cString, mode_t(permissions), 0) }
    }
}

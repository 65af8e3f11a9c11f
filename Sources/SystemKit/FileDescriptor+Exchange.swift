#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

extension FileDescriptor {
    /// Swaps what the names `first` and `second` inside this directory hold,
    /// in one step (`renameat2(2)` with `RENAME_EXCHANGE`): each name holds one
    /// whole file or folder before and after, never none. Both must exist on
    /// the same filesystem; neither may be immutable.
    /// - Throws: ``Errno``: `ENOENT` when either is missing, `EXDEV` across
    ///   filesystems, `EPERM` when either is immutable.
    public func exchange(_ first: FileName, _ second: FileName) throws(Errno) {
        _ = try retryingOnInterrupt("renameat2 RENAME_EXCHANGE") {
            csystem_rename_exchange(rawValue, first.cString, rawValue, second.cString)
        }
    }

    /// Moves `name` from this directory to `newName` in `directory`, never
    /// replacing what `newName` holds (`renameat2(2)` with `RENAME_NOREPLACE`).
    /// - Throws: ``Errno``: `EEXIST` when `newName` exists, `ENOENT` when `name` does not.
    public func move(_ name: FileName, to directory: FileDescriptor, as newName: FileName) throws(Errno) {
        _ = try retryingOnInterrupt("renameat2 RENAME_NOREPLACE") {
            csystem_rename_noreplace(rawValue, name.cString, directory.rawValue, newName.cString)
        }
    }
}

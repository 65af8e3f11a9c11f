#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

extension FileDescriptor {
    /// The value of the extended attribute `attribute` (`security.capability`,
    /// say) of `name` inside this directory, or nil when it has none; a
    /// symbolic link is not followed and the file is not opened, so an
    /// execute-only program can be read too.
    ///
    /// Maps to `lgetxattr(2)` through `/proc/self/fd`.
    /// - Parameter limit: the largest value read; a longer one throws `ERANGE`.
    /// - Throws: ``Errno``; `ERANGE` past `limit`, `EOPNOTSUPP` where the
    ///   filesystem has no such attributes.
    public func extendedAttribute(_ attribute: String, of name: FileName, limit: Int) throws(Errno) -> [UInt8]? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: limit, alignment: 8)
        defer { buffer.deallocate() }
        do throws(Errno) {
            let count = try retryingOnInterrupt("lgetxattr \(attribute)") {
                csystem_get_xattr_at(rawValue, name.cString, attribute, buffer.baseAddress, buffer.count)
            }
            return Array(buffer.prefix(count))
        } catch {
            if error.rawValue == ENODATA { return nil }
            throw error
        }
    }

    /// Whether the filesystem holding the open file ignores setuid and setgid
    /// bits and file capabilities (mounted `nosuid`; `fstatvfs(3)`).
    public func isOnNoSUIDMount() throws(Errno) -> Bool {
        var status = statvfs()
        _ = try retryingOnInterrupt("fstatvfs") { fstatvfs(rawValue, &status) }
        return status.f_flag & UInt(ST_NOSUID) != 0
    }
}

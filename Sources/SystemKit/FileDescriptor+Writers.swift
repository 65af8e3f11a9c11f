#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Whether anyone holds a file open for writing.
public enum WriterCheck: Hashable, Sendable {
    /// No descriptor, mapping or descriptor in flight has the file open for writing.
    case none
    /// Some open file description has it open for writing (a descriptor, a
    /// shared writable mapping, or a descriptor passed over a socket).
    case present
    /// The filesystem or the system settings give no way to tell.
    case unknown(Errno)
}

extension FileDescriptor {
    /// Whether the open regular file has writers, asked of the kernel by
    /// taking a read lease and letting it go (`fcntl(F_SETLEASE, F_RDLCK)`).
    ///
    /// The kernel refuses a read lease with `EAGAIN` while any open file
    /// description has the inode open for writing, whichever process holds
    /// it: a descriptor, a shared writable mapping (it keeps its file open),
    /// or a descriptor in flight in a Unix socket. Needs the file's owner or
    /// `CAP_LEASE`.
    ///
    /// The lease lasts until this descriptor is closed (or `releasingLease`
    /// is set): a read lease only delays another process's opening the file
    /// for writing, which an immutable file refuses anyway.
    public func writers(releasingLease: Bool = false) -> WriterCheck {
        do {
            _ = try retryingOnInterrupt("fcntl F_SETLEASE") { csystem_set_lease(rawValue, CSYSTEM_F_RDLCK) }
        } catch where error.rawValue == EAGAIN {
            return .present
        } catch {
            return .unknown(error)
        }
        if releasingLease { _ = csystem_set_lease(rawValue, CSYSTEM_F_UNLCK) }
        return .none
    }

    /// The target of the symbolic link `name` inside this directory (`readlinkat(2)`).
    public func linkTarget(of name: FileName) throws(Errno) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let capacity = buffer.count
        let count = try retryingOnInterrupt("readlinkat") { readlinkat(rawValue, name.cString, &buffer, capacity) }
        return buffer[0..<count].map { UInt8(bitPattern: $0) }
    }

    /// A new open file description of this same directory (`openat(fd, ".")`),
    /// with its own read position, for a walk that must not share one.
    public func reopenDirectory() throws(Errno) -> FileDescriptor {
        try openChild(FileName("."), flags: O_RDONLY | O_DIRECTORY)
    }
}

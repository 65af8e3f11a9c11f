#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// A new pipe (`pipe(2)`), both ends close-on-exec; a program spawned
    /// with one end (`HelperProcess.spawn(_:arguments:environment:input:output:error:)`)
    /// gets it as a standard descriptor.
    /// - Throws: ``Errno`` from `pipe(2)` or `fcntl(2)`.
    public static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw Errno.current("pipe") }
        let read = FileDescriptor(taking: ends[0]), write = FileDescriptor(taking: ends[1])
        for end in [read, write] where fcntl(end.rawValue, F_SETFD, FD_CLOEXEC) != 0 {
            throw Errno.current("fcntl F_SETFD")
        }
        return (read, write)
    }
}

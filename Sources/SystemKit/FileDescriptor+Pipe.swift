#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

extension FileDescriptor {
    /// A new pipe (`pipe2(2)`), both ends close-on-exec from the start (so a
    /// program another thread spawns at that moment never gets one); a program spawned
    /// with one end (`HelperProcess.spawn(_:arguments:environment:input:output:error:)`)
    /// gets it as a standard descriptor.
    /// - Throws: ``Errno`` from `pipe2(2)`.
    public static func pipe() throws(Errno) -> (read: FileDescriptor, write: FileDescriptor) {
        var ends: [CInt] = [-1, -1]
        guard csystem_pipe_cloexec(&ends) == 0 else { throw Errno.current("pipe2") }
        return (FileDescriptor(taking: ends[0]), FileDescriptor(taking: ends[1]))
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// The system calls a process may still make, narrowed for good.
public enum SystemCallFilter {
    /// From now on the calling thread, and every thread it starts, may only
    /// read and write the descriptors it holds, manage its memory and exit;
    /// any other call (open, socket, execve, ptrace, kill…) ends the process
    /// with `SIGSYS`. Call it before any other thread runs. Sets
    /// `no_new_privs`, and makes the process not dumpable: no process of its
    /// user may trace it.
    ///
    /// Maps to `prctl(PR_SET_DUMPABLE)`, `prctl(PR_SET_NO_NEW_PRIVS)` and
    /// `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` with an allowlist
    /// (`csystem_restrict_to_reading_and_writing`).
    public static func restrictToReadingAndWriting() throws(Errno) {
        guard csystem_restrict_to_reading_and_writing() == 0 else { throw Errno.current("seccomp") }
    }
}

extension FileDescriptor {
    /// A sealed memory file holding `bytes`, read from its start: bytes this
    /// process already holds, handed to another as a descriptor that no one
    /// can change (`memfd_create(2)` with every seal).
    public static func sealedMemory(holding bytes: [UInt8]) throws(Errno) -> FileDescriptor {
        let fd = bytes.withUnsafeBytes { csystem_sealed_memory($0.baseAddress, $0.count) }
        guard fd >= 0 else { throw Errno.current("memfd_create") }
        return FileDescriptor(taking: fd)
    }
}

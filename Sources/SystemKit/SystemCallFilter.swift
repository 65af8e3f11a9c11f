#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// The system calls a process may still make, narrowed for good.
public enum SystemCallFilter {
    /// From now on this process may only read and write the descriptors it
    /// holds, manage its memory and exit; any other call (open, socket,
    /// execve, ptrace, kill…) ends it with `SIGSYS`. Sets `no_new_privs`.
    ///
    /// Maps to `prctl(PR_SET_NO_NEW_PRIVS)` and `seccomp(SECCOMP_SET_MODE_FILTER)`
    /// with an allowlist (`csystem_restrict_to_reading_and_writing`).
    public static func restrictToReadingAndWriting() throws(Errno) {
        guard csystem_restrict_to_reading_and_writing() == 0 else { throw Errno.current("seccomp") }
    }
}

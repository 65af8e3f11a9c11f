#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// Keeps a process that handles secrets out of core files.
public enum CoreDumps {
    /// Sets `RLIMIT_CORE` to zero and marks the process not dumpable
    /// (`PR_SET_DUMPABLE` 0), so a crash writes no core, not even through a
    /// `core_pattern` pipe, and only root can read its memory or trace it.
    ///
    /// Maps to `setrlimit(2)` and `prctl(2)`.
    public static func disable() throws(Errno) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) == 0 else {
            throw Errno.current("setrlimit RLIMIT_CORE")
        }
        guard csystem_set_dumpable(0) == 0 else { throw Errno.current("prctl PR_SET_DUMPABLE") }
    }

    /// Whether this process may dump core (`PR_GET_DUMPABLE`); nil when
    /// `prctl` fails.
    public static var isDumpable: Bool? {
        let answer = csystem_get_dumpable()
        return answer < 0 ? nil : answer != 0
    }
}

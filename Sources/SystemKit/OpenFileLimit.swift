#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors (`RLIMIT_NOFILE`, `getrlimit(2)`).
///
/// systemd starts services with a soft limit of 1024 and a much larger hard
/// limit; a server holding thousands of clients must raise the soft one.
public enum OpenFileLimit {
    /// Raises the soft limit to at least `minimum`, capped by the hard limit.
    /// Never lowers it.
    /// - Returns: the soft limit now in force.
    /// - Throws: ``Errno`` from `setrlimit(2)`.
    @discardableResult
    public static func raise(toAtLeast minimum: Int) throws(Errno) -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { throw Errno.current("getrlimit RLIMIT_NOFILE") }
        let wanted = min(rlim_t(clamping: minimum), limit.rlim_max)
        guard wanted > limit.rlim_cur else { return Int(clamping: limit.rlim_cur) }
        limit.rlim_cur = wanted
        guard setrlimit(resource, &limit) == 0 else { throw Errno.current("setrlimit RLIMIT_NOFILE") }
        return Int(clamping: wanted)
    }

    private static var resource: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}

#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// A short-lived child process that does one job for this one (PAM, as
/// polkit's agent helper does for polkitd), held by a pidfd so a recycled pid
/// is never signaled or waited for, and always reaped: killed first if it is
/// still running when its owner lets go.
///
/// Not thread-safe: one owner, the thread that started it.
public final class HelperProcess {
    /// How a helper ended.
    public enum Exit: Hashable, Sendable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(CInt)
        /// A signal ended it (`SIGSEGV`, or `SIGKILL` from its owner).
        case killed(signal: CInt, dumpedCore: Bool)

        public var description: String {
            switch self {
            case .exited(let status): return "exited with status \(status)"
            case .killed(let signal, let dumpedCore):
                let name = HelperProcess.signalNames[signal] ?? "signal \(signal)"
                return "was killed by \(name)\(dumpedCore ? " (core dumped)" : "")"
            }
        }
    }

    fileprivate static let signalNames: [CInt: String] = [
        SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL", SIGFPE: "SIGFPE",
        SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGSYS: "SIGSYS", SIGTRAP: "SIGTRAP", SIGPIPE: "SIGPIPE",
    ]

    public let pid: pid_t
    private let pidfd: FileDescriptor
    private var exit: Exit?

    private init(pid: pid_t, pidfd: FileDescriptor) {
        self.pid = pid
        self.pidfd = pidfd
    }

    /// Starts `path` with `arguments` (`argv[1...]`) and nothing in its
    /// environment but `environment` (`NAME=value`), with `descriptor` as its
    /// descriptor 3, standard error shared, `/dev/null` as standard input
    /// and output, every other descriptor closed, no signal blocked or
    /// ignored, and killed when the calling thread ends (`PR_SET_PDEATHSIG`):
    /// an owner killed in the middle of the helper's job takes it along
    /// (a Flatpak mover's `flatpak`, which its recovery must not race).
    ///
    /// Maps to `fork(2)` and `execve(2)` (`csystem_spawn_helper`) and
    /// `pidfd_open(2)`; safe to call from any thread of a multi-threaded process.
    public static func spawn(_ path: String, arguments: [String], environment: [String],
                             descriptor: CInt) throws(Errno) -> HelperProcess {
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: CInt = 0
        let result = csystem_spawn_helper(path, &argv, &envp, descriptor, &pid)
        guard result == 0 else { throw Errno(result, operation: "posix_spawn \(path)") }
        return try held(pid, path: path)
    }

    /// Starts `program` (looked up in `PATH` when it has no slash) with
    /// `arguments` and `environment` (`NAME=value`; nil for this process's
    /// own), `input`, `output` and `error` as its standard input, output and
    /// error (standard error shared unless given), every other descriptor
    /// closed, no signal blocked or ignored: ssh(1) carrying a stream for this
    /// process, or pinentry spoken to on two pipes (the caller keeps the
    /// other ends).
    ///
    /// Maps to `posix_spawnp(3)` (`csystem_spawn_connected`) and `pidfd_open(2)`.
    public static func spawn(_ program: String, arguments: [String], environment: [String]? = nil,
                             input: CInt, output: CInt, error: CInt = 2) throws(Errno) -> HelperProcess {
        var argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = (environment ?? []).map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: CInt = 0
        let result = environment == nil
            ? csystem_spawn_connected(program, &argv, environ, input, output, error, &pid)
            : csystem_spawn_connected(program, &argv, &envp, input, output, error, &pid)
        guard result == 0 else { throw Errno(result, operation: "posix_spawnp \(program)") }
        return try held(pid, path: program)
    }

    /// The pidfd of a child not reaped yet (so its pid cannot have been reused).
    private static func held(_ pid: pid_t, path: String) throws(Errno) -> HelperProcess {
        let fd = csystem_pidfd_open(pid, 0)
        guard fd >= 0 else {
            let error = Errno.current("pidfd_open")
            Glibc.kill(pid, SIGKILL)
            var status: CInt = 0
            _ = try? retryingOnInterrupt("waitpid") { waitpid(pid, &status, 0) }
            throw error
        }
        return HelperProcess(pid: pid, pidfd: FileDescriptor(taking: fd))
    }

    /// Waits until the helper has ended, or `deadline` passed, and reaps it.
    /// - Returns: how it ended; nil when it still runs at `deadline`.
    /// - Throws: ``Errno`` from `poll(2)` or `waitid(2)`.
    public func waitForExit(until deadline: MonotonicInstant?) throws(Errno) -> Exit? {
        if let exit { return exit }
        // A pidfd is readable once its process has ended.
        guard try Poll.wait(for: Int16(POLLIN), on: pidfd.rawValue, until: deadline) != nil else { return nil }
        return try reap(blocking: false)
    }

    /// Ends the helper now (`SIGKILL` through the pidfd) and reaps it.
    /// - Returns: how it ended (`killed(SIGKILL)`, unless it had ended already).
    @discardableResult
    public func kill() -> Exit? {
        if let exit { return exit }
        _ = csystem_pidfd_send_signal(pidfd.rawValue, SIGKILL, 0)
        return try? reap(blocking: true)
    }

    private func reap(blocking: Bool) throws(Errno) -> Exit? {
        var code: CInt = 0, status: CInt = 0
        _ = try retryingOnInterrupt("waitid") { csystem_pidfd_wait(pidfd.rawValue, blocking ? 0 : 1, &code, &status) }
        switch code {
        case CSYSTEM_CLD_EXITED: exit = .exited(status)
        case CSYSTEM_CLD_KILLED, CSYSTEM_CLD_DUMPED: exit = .killed(signal: status, dumpedCore: code == CSYSTEM_CLD_DUMPED)
        default: return nil
        }
        return exit
    }

    deinit { kill() }

    /// In a helper: gives up every capability but `CAP_DAC_READ_SEARCH`
    /// (which a PAM module may need to read a file in a user's home), for
    /// good (`capset(2)`): a helper has no business with the owner's others.
    public static func dropCapabilitiesButReadSearch() throws(Errno) {
        var keep = [CSYSTEM_CAP_DAC_READ_SEARCH]
        guard csystem_keep_capabilities(&keep, CInt(keep.count)) == 0 else { throw Errno.current("capset") }
    }

    /// In a helper: asks for `SIGKILL` when the thread that started it ends
    /// (`PR_SET_PDEATHSIG`), so a helper never outlives its owner's wait.
    /// - Returns: false when the owner has already gone (the parent is no longer `parent`).
    public static func endWithParent(_ parent: pid_t) throws(Errno) -> Bool {
        guard csystem_set_parent_death_signal(SIGKILL) == 0 else { throw Errno.current("prctl PR_SET_PDEATHSIG") }
        return getppid() == parent
    }
}

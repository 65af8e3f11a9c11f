#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// A long-lived child process run as another user, held by a pidfd so a
/// recycled pid is never signaled or waited for (`csystem_spawn_as_user`):
/// its own session, no new privileges, not dumpable, standard output and
/// error into one descriptor of its parent's.
///
/// Not thread-safe: one owner, the thread that supervises it.
public final class UserProcess {
    /// What `waitid(2)` found.
    public enum Event: Hashable, Sendable, CustomStringConvertible {
        /// It called `exit` with this status.
        case exited(CInt)
        /// A signal ended it.
        case killed(signal: CInt, dumpedCore: Bool)
        /// A signal stopped it (`SIGSTOP`, `SIGTSTP`…); it still runs.
        case stopped(signal: CInt)

        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .killed(let signal, let dumpedCore): "signal \(signal)\(dumpedCore ? " (core dumped)" : "")"
            case .stopped(let signal): "stopped by signal \(signal)"
            }
        }
    }

    /// Why a process could not be started: the step, and the errno.
    public struct SpawnError: Error, CustomStringConvertible, Sendable {
        public var step: String
        public var errno: Errno

        public var description: String { "\(step): \(errno)" }
    }

    public let pid: pid_t
    public let pidfd: FileDescriptor
    /// Set once it has been reaped.
    public private(set) var exit: Event?
    /// The ends ``release()`` takes, while the process waits before exec.
    private var held: (release: CInt, report: CInt, path: String)?

    private init(pid: pid_t, pidfd: FileDescriptor) {
        self.pid = pid
        self.pidfd = pidfd
    }

    /// Starts `program` (a descriptor, or the file at `path` when nil) with
    /// `arguments` (`argv`, the program's own name first) and nothing in its
    /// environment but `environment`, as uid `uid`, gid `gid` with `groups`,
    /// real gid `realGID`, in the folder `directoryDescriptor` (or `directory`),
    /// with `input` as its standard input (`/dev/null` when nil) and `output`
    /// as its standard output and error.
    ///
    /// The process is held before exec until ``release()``: its owner records
    /// who it is (its pid, its pidfd) first, so that nothing it does is seen
    /// before it is known.
    ///
    /// A `realGID` other than `gid` puts the program in secure-execution
    /// mode, not dumpable from its first instruction: the dynamic loader then
    /// ignores `LD_*` variables, and `$ORIGIN` in a run path must lead to a
    /// trusted folder.
    public static func spawn(_ path: String, program: CInt? = nil, arguments: [String], environment: [String],
                             directory: String?, directoryDescriptor: CInt? = nil,
                             uid: uid_t, gid: gid_t, realGID: gid_t, groups: [gid_t],
                             input: CInt? = nil, output: CInt) throws(SpawnError) -> UserProcess {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: CInt = 0, pidfd: CInt = -1, release: CInt = -1, report: CInt = -1, stage: CInt = 0
        let groupList = groups.map { UInt32($0) }
        let result = groupList.withUnsafeBufferPointer { list in
            csystem_spawn_as_user(path, program ?? -1, &argv, &envp, directory, directoryDescriptor ?? -1, uid, gid, realGID,
                                  list.baseAddress, CInt(list.count), input ?? -1, output, &pid, &pidfd, &release, &report, &stage)
        }
        guard result == 0 else { throw SpawnError(step: Self.step(stage, path), errno: Errno(result, operation: Self.step(stage, path))) }
        let process = UserProcess(pid: pid, pidfd: FileDescriptor(taking: pidfd))
        process.held = (release, report, path)
        return process
    }

    /// Lets a process ``spawn`` holds go on to exec, and waits until it has.
    /// - Throws: ``SpawnError`` when a step before the exec, or the exec
    ///   itself, failed (the process is then reaped, and ``exit`` set).
    public func release() throws(SpawnError) {
        guard let (release, report, path) = held else { return }
        held = nil
        var stage: CInt = 0
        let result = csystem_spawn_release(pid, release, report, &stage)
        guard result == 0 else {
            exit = .exited(127)
            throw SpawnError(step: Self.step(stage, path), errno: Errno(result, operation: Self.step(stage, path)))
        }
    }

    private static func step(_ stage: CInt, _ path: String) -> String {
        switch stage {
        case 1: "setting up"
        case 2: "setgroups"
        case 3: "setresgid"
        case 4: "setresuid"
        case 5: "execve \(path)"
        default: "fork"
        }
    }

    /// What happened to it since last asked, without waiting: nil when
    /// nothing did. An ending reaps it, and is kept in ``exit``.
    public func poll() -> Event? {
        guard exit == nil else { return nil }
        var code: CInt = 0, status: CInt = 0
        guard csystem_pidfd_wait_event(pidfd.rawValue, &code, &status) == 0 else {
            // ECHILD: reaped already, which only this owner does.
            if errno == ECHILD { exit = .exited(0) }
            return exit
        }
        let event: Event? = switch code {
        case 0: nil
        case CSYSTEM_CLD_EXITED: .exited(status)
        case CSYSTEM_CLD_KILLED: .killed(signal: status, dumpedCore: false)
        case CSYSTEM_CLD_DUMPED: .killed(signal: status, dumpedCore: true)
        case CSYSTEM_CLD_STOPPED: .stopped(signal: status)
        default: nil
        }
        if case .stopped = event {} else if let event { exit = event }
        return event
    }

    /// Sends `signal` through the pidfd (`pidfd_send_signal(2)`); false once it has ended.
    @discardableResult
    public func send(_ signal: CInt) -> Bool {
        exit == nil && csystem_pidfd_send_signal(pidfd.rawValue, signal, 0) == 0
    }

    deinit {
        if let (release, report, _) = held {
            _ = Glibc.close(release)
            _ = Glibc.close(report)
        }
        if exit == nil {
            _ = csystem_pidfd_send_signal(pidfd.rawValue, SIGKILL, 0)
            var code: CInt = 0, status: CInt = 0
            _ = csystem_pidfd_wait(pidfd.rawValue, 0, &code, &status)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import Synchronization
import SystemKit
import GuardStore

/// Runs every approved app's monitor in each session of its child, starts
/// it again when it ends, and stops it when the session ends or the approval
/// is lifted: the analogue of the system running an app's DeviceActivity
/// monitor, so that one `kill` bypasses nothing.
///
/// One thread of its own (`guard-monitors`) owns every monitor process: it
/// waits in `poll(2)` for events only: their pidfds and output, `SIGCHLD`
/// (a stop makes no pidfd readable), a wake-up counter the sessions and the
/// ledger signal, logind's descriptor and a pidfd of each session's leader;
/// its timeout is whatever is due next (a restart, a kill, a held alert).
/// Readers (`ListMonitors`, `IdentifyMonitor`) see a copy of the table under
/// a lock.
package final class MonitorKeeper: Sendable {
    /// What the supervisor needs of the rest of the Guard.
    package struct Context: Sendable {
        /// The sessions open now, each once (``MonitorSessions``).
        var sessions: @Sendable () -> [MonitorSession]
        /// logind's sessions, when it runs: its change descriptor is watched.
        var logind: LogindSessions?
        /// The approved child authorizations now.
        var approvals: @Sendable () throws(GuardFailure) -> [AuthorizationRecord]
        /// The configuration now.
        var configuration: @Sendable () -> GuardConfiguration
        /// Locks or ends the child's sessions when a required monitor is kept down.
        var enforcer: any SessionEnforcing
        /// Appends an audit row.
        var audit: @Sendable (_ outcome: AuditOutcome, _ user: String, _ appID: String, _ detail: String) -> Void
        /// The Guard's socket, which the monitor's library calls.
        var socketPath: String
        /// Where the monitors running now are recorded, so that a Guard
        /// started after a crash ends the ones it left behind.
        var record: Store?
        var logger: Logger

        package init(sessions: @escaping @Sendable () -> [MonitorSession], logind: LogindSessions?,
                     approvals: @escaping @Sendable () throws(GuardFailure) -> [AuthorizationRecord],
                     configuration: @escaping @Sendable () -> GuardConfiguration, enforcer: any SessionEnforcing,
                     audit: @escaping @Sendable (_ outcome: AuditOutcome, _ user: String, _ appID: String, _ detail: String) -> Void,
                     socketPath: String, record: Store?, logger: Logger) {
            self.sessions = sessions
            self.logind = logind
            self.approvals = approvals
            self.configuration = configuration
            self.enforcer = enforcer
            self.audit = audit
            self.socketPath = socketPath
            self.record = record
            self.logger = logger
        }
    }

    /// Whose a running monitor is, for `IdentifyMonitor`.
    struct Owner: Sendable {
        var uid: UInt32
        /// A Flatpak app's: the identity of the approved deployment's
        /// `files` folder. Its sandboxed processes run under the process the
        /// Guard started (`flatpak run`), and are vouched for too when their
        /// sandbox's `/app` is that folder.
        var sandboxFiles: FileIdentity?
    }

    struct Key: Hashable, Sendable, Comparable {
        var user: String
        var appID: String
        var session: String

        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.user, lhs.appID, lhs.session) < (rhs.user, rhs.appID, rhs.session)
        }
    }

    private struct Shared {
        var table: [Key: MonitorSnapshot] = [:]
        var owners: [Key: Owner] = [:]
        /// Monitors whose process is held before exec: known to
        /// `IdentifyMonitor` already, listed as running only once released.
        var held: Set<Key> = []
        var stopping = false
        var started = false
        var approvalsChanged = true
    }

    private let shared = Mutex(Shared())
    private let alertListeners = Mutex<(next: Int, all: [Int: @Sendable (MonitorAlert) -> Void])>((0, [:]))
    private let wakeUp: EventCounter?
    private let finished = Mutex<SystemThread?>(nil)

    package init() {
        wakeUp = try? EventCounter()
    }

    /// Starts the supervising thread. Call once.
    /// - Throws: ``Errno`` when no thread or no wake-up counter can be made.
    package func start(_ context: Context) throws(Errno) {
        guard let wakeUp else { throw Errno(EMFILE, operation: "eventfd") }
        let alreadyStarted = shared.withLock { shared in
            defer { shared.started = true }
            return shared.started
        }
        guard !alreadyStarted else { return }
        let supervisor = Supervisor(context: context, keeper: self, wakeUp: wakeUp.rawValue)
        let thread = try SystemThread.spawn(name: "guard-monitors") { supervisor.run() }
        finished.withLock { $0 = thread }
    }

    /// Looks again at the sessions and approvals now.
    package func wake() { wakeUp?.signal() }

    /// Stops every monitor (`SIGTERM`, then `SIGKILL` after two seconds) and
    /// the thread, when the Guard stops: the monitors are the Guard's children
    /// and outlive it otherwise.
    package func stopAll() {
        shared.withLock { $0.stopping = true }
        wake()
        let thread = finished.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.join()
    }

    var isStopping: Bool { shared.withLock { $0.stopping } }

    /// Tells the keeper an authorization changed: it reads the approvals again now.
    package func approvalsChanged() {
        shared.withLock { $0.approvalsChanged = true }
        wake()
    }

    /// Whether the approvals changed since last asked.
    func takeApprovalsChanged() -> Bool {
        shared.withLock { shared in
            defer { shared.approvalsChanged = false }
            return shared.approvalsChanged
        }
    }

    /// The monitors now, running or waiting, in order.
    package func list() -> [MonitorSnapshot] {
        shared.withLock { shared in
            shared.table.sorted { $0.key < $1.key }.map { key, snapshot in
                guard shared.held.contains(key) else { return snapshot }
                var starting = snapshot
                starting.state = .waiting
                starting.pid = 0
                return starting
            }
        }
    }

    /// The monitor `pid` is, when `uid` is the monitor's user: a process the
    /// Guard itself started (published before its first instruction, and
    /// withdrawn as soon as it is reaped, so the pid is that very process's), or,
    /// for a Flatpak app's monitor, a descendant of it in a sandbox of the
    /// approved deployment (``FlatpakMonitorSandbox``).
    /// `pidfd`, the caller's pinned at connection, must still be alive: a
    /// connection whose process ended cannot borrow a recycled pid.
    package func monitor(containing pid: pid_t, uid: UInt32, pidfd: CInt?) -> MonitorSnapshot? {
        if let pidfd, !ProcessHandle.isAlive(pidfd: pidfd) { return nil }
        let running: [pid_t: (MonitorSnapshot, FileIdentity?)] = shared.withLock { shared in
            var running: [pid_t: (MonitorSnapshot, FileIdentity?)] = [:]
            for (key, snapshot) in shared.table where snapshot.state == .running {
                guard let owner = shared.owners[key], owner.uid == uid else { continue }
                running[snapshot.pid] = (snapshot, owner.sandboxFiles)
            }
            return running
        }
        guard !running.isEmpty else { return nil }
        if let (found, _) = running[pid] { return found }
        var current = pid
        for _ in 0..<32 {
            if let (found, files) = running[current] {
                // A process of a sandbox whose /app is not the approved deployment's is not the monitor.
                guard let files, FlatpakMonitorSandbox.judge(pid, files: files) == .approved else { return nil }
                return found
            }
            guard let parent = Self.parent(of: current), parent > 1 else { return nil }
            current = parent
        }
        return nil
    }

    /// The parent pid `/proc/PID/stat` names (the field after the last `)`).
    private static func parent(of pid: pid_t) -> pid_t? {
        guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/stat", limit: 4096),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return pid_t(String(decoding: fields[1], as: UTF8.self))
    }

    /// Calls `listener` with each alert, on the thread that raised it.
    package func watchAlerts(_ listener: @escaping @Sendable (MonitorAlert) -> Void) -> Int {
        alertListeners.withLock { state in
            state.next += 1
            state.all[state.next] = listener
            return state.next
        }
    }

    package func unwatchAlerts(_ token: Int) {
        _ = alertListeners.withLock { $0.all.removeValue(forKey: token) }
    }

    /// Tells every watcher of `alert`.
    func raise(_ alert: MonitorAlert) {
        let listeners = alertListeners.withLock { Array($0.all.values) }
        for listener in listeners { listener(alert) }
    }

    /// Publishes the supervisor's table.
    func publish(_ table: [Key: MonitorSnapshot], owners: [Key: Owner], held: Set<Key> = []) {
        shared.withLock { shared in
            shared.table = table
            shared.owners = owners
            shared.held = held
        }
    }
}

/// A session a monitor runs in, from logind or the PAM session module.
package struct MonitorSession: Sendable, Equatable {
    /// logind's session id, or `pam-` and the pid of the process that opened it.
    package var name: String
    package var session: LoginSession
}

/// The sessions the monitors run in: logind's when it runs, and the PAM
/// module's that logind does not know (a session logind knows is told by
/// both, with the same `XDG_SESSION_ID`). `known` is every session id
/// logind has, those it runs no monitor in too (a `background` session of a
/// service or cron): logind's judgement of those stands.
package enum MonitorSessions {
    package static func merge(logind: [LoginSession], known: Set<String> = [], pam: [LoginSession]) -> [MonitorSession] {
        let known = known.union(logind.compactMap(\.sessionID))
        let fromLogind = logind.compactMap { session in session.sessionID.map { MonitorSession(name: $0, session: session) } }
        let fromPAM = pam.filter { session in session.sessionID.map { !known.contains($0) } ?? true }
            .map { MonitorSession(name: "pam-\($0.leader)", session: $0) }
        return fromLogind + fromPAM
    }
}

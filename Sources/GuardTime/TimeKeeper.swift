#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import GuardIdentity
import GuardSessions
import GuardStore
import TimeLimits

/// Keeps the limits on a child's session time while they are logged in:
/// counts each child's time from the sessions the Guard knows (logind's, or
/// the PAM module's), per local day, in the store; writes the login-limits
/// file the PAM module's account check reads; warns the child before the end;
/// and at the end locks or ends their sessions through the Guard's
/// ``SessionEnforcing``, again while the time stays up, until more time is
/// given.
///
/// One thread of its own (`guard-time`) does it all: it looks at the
/// sessions, the limits and the clock when told something changed
/// (``wake()``), when a warning or the end is due, and at most
/// ``GuardLimits/timeLookInterval`` apart while a child with limits is
/// logged in (logind's sessions end without telling it). With no such child
/// logged in it waits for a session to open (``SessionChanges``), looking
/// only every ``GuardLimits/timeRecordInterval``.
package final class TimeKeeper: Sendable {
    /// What the keeper needs of the rest of the Guard.
    package struct Context: Sendable {
        /// The sessions open now (``MonitorSessions``: logind's and the PAM module's, each once).
        var sessions: @Sendable () -> [MonitorSession]
        /// The children with limits in force.
        var source: any TimeLimitsSource
        /// Locks or ends sessions: the Guard's one ``SessionEnforcer``.
        var enforcer: any SessionEnforcing
        /// Tells a child how long they have left.
        var messenger: any SessionMessenger
        /// Where the time used is kept.
        var store: Store
        /// The login-limits file (the state directory's ``LoginLimitsFile/name``).
        var filePath: String
        var limits: GuardLimits
        /// Appends an audit row: a warning given (`warned`), sessions `locked` or `ended`.
        var audit: @Sendable (_ outcome: AuditOutcome, _ user: String, _ detail: String) -> Void
        var logger: Logger
        /// How the keeper learns that a session opened.
        var sessionChanges: SessionChanges

        package init(sessions: @escaping @Sendable () -> [MonitorSession], source: any TimeLimitsSource,
                     enforcer: any SessionEnforcing, messenger: any SessionMessenger = TerminalMessenger(),
                     store: Store, filePath: String, limits: GuardLimits = GuardLimits(),
                     audit: @escaping @Sendable (_ outcome: AuditOutcome, _ user: String, _ detail: String) -> Void,
                     logger: Logger, sessionChanges: SessionChanges = .unwatched) {
            self.sessionChanges = sessionChanges
            self.sessions = sessions
            self.source = source
            self.enforcer = enforcer
            self.messenger = messenger
            self.store = store
            self.filePath = filePath
            self.limits = limits
            self.audit = audit
            self.logger = logger
        }
    }

    /// How a session's opening reaches the keeper. A session it has not
    /// seen is not counted until it looks, so where openings do not wake
    /// it, it looks every ``GuardLimits/timeLookInterval`` even with no
    /// child logged in.
    package enum SessionChanges: Sendable {
        /// Every session reaches ``wake()``: no logind runs, and the PAM
        /// module tells the Guard of each session it opens.
        case announced
        /// logind runs: a change monitor of the keeper's own (not shared,
        /// as each reader acknowledges its changes) wakes it.
        case watched(LogindSessions)
        /// Nothing tells: the keeper looks at its interval.
        case unwatched
    }

    struct Shared {
        var stopping = false
        var thread: SystemThread?
        var day = ""
        var used: [UInt32: Int] = [:]
        var looks = 0
    }

    let shared = Mutex(Shared())
    let wakeUp: EventCounter?

    package init() {
        wakeUp = try? EventCounter()
    }

    /// Starts the keeper's thread: it reads today's time from the store and
    /// writes the login-limits file before anything else. Call once.
    /// - Throws: ``Errno`` when no thread or no wake-up counter can be made.
    package func start(_ context: Context) throws(Errno) {
        guard let wakeUp else { throw Errno(EMFILE, operation: "eventfd") }
        try shared.withLock { (shared: inout Shared) throws(Errno) in
            guard shared.thread == nil, !shared.stopping else { return }
            let worker = Worker(context: context, keeper: self, wakeUp: wakeUp)
            shared.thread = try SystemThread.spawn(name: "guard-time") { worker.run() }
        }
    }

    /// Looks again now: a session opened or closed, the configuration was reloaded.
    package func wake() { wakeUp?.signal() }

    /// The limits changed (set, lifted, more time given): looks again now,
    /// rewriting the login-limits file.
    package func limitsChanged() { wake() }

    /// Today's session time by uid, as of the keeper's last look (for
    /// `familyctl limits`): the local day and each child's seconds.
    package func usedToday() -> (day: String, seconds: [UInt32: Int]) {
        shared.withLock { ($0.day, $0.used) }
    }

    /// How many looks the keeper has made (tests wait on it).
    package var looks: Int { shared.withLock { $0.looks } }

    /// Counts the time up to now, writes it to the store and the file, and
    /// stops the thread. For the Guard's stop.
    package func stop() {
        let thread = shared.withLock { shared in
            shared.stopping = true
            defer { shared.thread = nil }
            return shared.thread
        }
        wake()
        thread?.join()
    }

    var isStopping: Bool { shared.withLock { $0.stopping } }

    func publish(day: String, used: [UInt32: Int]) {
        shared.withLock { shared in
            shared.day = day
            shared.used = used
            shared.looks += 1
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import GuardIdentity

/// The one place that locks or ends a user's login sessions (the Guard's
/// ``SessionEnforcing``): what a required monitor kept down costs, and what
/// time that is up costs (both through ``SessionRules``).
///
/// A session logind holds (a ``MonitorSession`` whose `sessionID` is set,
/// where logind runs) is locked or ended by logind itself, on the system
/// bus: `LockSession` or `TerminateSession`. A lock stands when the
/// session's screen locker says so (`LockedHint`) within the grace period;
/// otherwise (a text console has no locker, and a child can kill theirs)
/// the session is ended instead. After `TerminateSession`, a leader still
/// running at the end of the grace period is killed as below.
///
/// A session logind does not hold (the PAM session module's, `pam-PID`) is
/// ended by signalling its processes (``SessionProcesses``: `SIGTERM` to its
/// leader, `SIGHUP` and `SIGTERM` to the user's processes in it, `SIGKILL`
/// after the grace period). Without logind there is no screen to lock: a
/// lock ends the session, the safe choice, and the log says so.
///
/// ``enforce(_:on:reason:)`` returns at once. The work runs on one thread
/// of the enforcer's own (`guard-sessions`), started at the first call,
/// which waits for many sessions' grace periods at once; a session already
/// being ended is not ended twice (a lock under way becomes an end when an
/// end is asked). Each outcome is logged with the caller's reason.
package final class SessionEnforcer: SessionEnforcing {
    /// What the caller hands over and the thread takes.
    struct Request: Sendable {
        var consequence: SessionConsequence
        var session: MonitorSession
        var reason: String
    }

    /// Shared between callers and the thread, under a lock.
    final class Inbox: Sendable {
        struct State {
            var requests: [Request] = []
            /// Sessions the thread is working on.
            var active = 0
            var stopping = false
            var thread: SystemThread?
            var outcomes: [SessionEnforcement] = []
        }

        let state = Mutex(State())
        let wakeUp: EventCounter?

        init() {
            wakeUp = try? EventCounter()
        }
    }

    private let inbox = Inbox()
    private let limits: GuardLimits
    private let logger: Logger
    private let usesLogind: Bool

    /// - Parameters:
    ///   - limits: the grace period (``GuardLimits/sessionEndGrace``) and the
    ///     other bounds; tests pass a shorter grace.
    ///   - logger: where each outcome is written.
    ///   - usesLogind: whether sessions with a `sessionID` are logind's to
    ///     lock and end: whether logind runs here (a test that talks to a
    ///     logind elsewhere, through `DBUS_SYSTEM_BUS_ADDRESS`, says true).
    package init(limits: GuardLimits = GuardLimits(), logger: Logger,
                 usesLogind: Bool = LogindSessions.isRunning()) {
        self.limits = limits
        self.logger = logger
        self.usesLogind = usesLogind
    }

    /// The thread finishes what was asked and ends on its own; nobody joins it.
    deinit {
        let thread = inbox.state.withLock { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
        thread?.detach()
        inbox.wakeUp?.signal()
    }

    package func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String) {
        guard !sessions.isEmpty else { return }
        let refused: [MonitorSession] = inbox.state.withLock { state in
            guard !state.stopping else { return sessions }
            let room = max(0, limits.sessionsWaitingForEnforcement - state.requests.count - state.active)
            state.requests += sessions.prefix(room).map { Request(consequence: consequence, session: $0, reason: reason) }
            return Array(sessions.dropFirst(room))
        }
        for session in refused {
            logger.error("session: \(session.name) of \(session.session.user) cannot be \(consequence == .lock ? "locked" : "ended"): "
                         + "\(limits.sessionsWaitingForEnforcement) sessions are waiting already, or the Guard is stopping: \(reason)")
        }
        guard refused.count < sessions.count else { return }
        startIfNeeded()
        inbox.wakeUp?.signal()
    }

    /// The latest outcomes, oldest first (at most ``GuardLimits/sessionOutcomesKept``).
    package func recentOutcomes() -> [SessionEnforcement] {
        inbox.state.withLock { $0.outcomes }
    }

    /// Waits until every session asked for has been dealt with, or `deadline`.
    /// - Returns: whether nothing is left to do.
    @discardableResult
    package func waitUntilIdle(until deadline: MonotonicInstant) -> Bool {
        while true {
            let idle = inbox.state.withLock { $0.requests.isEmpty && $0.active == 0 }
            if idle { return true }
            if MonotonicInstant.now >= deadline { return false }
            SystemThread.sleep(for: .milliseconds(10))
        }
    }

    /// Finishes what was asked (each ending within its grace period), then
    /// stops the thread; later calls are refused. For the Guard's stop.
    package func stop() {
        let thread = inbox.state.withLock { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
        inbox.wakeUp?.signal()
        thread?.join()
    }

    private func startIfNeeded() {
        inbox.state.withLock { state in
            guard state.thread == nil, !state.stopping else { return }
            let worker = Worker(inbox: inbox, limits: limits, logger: logger, usesLogind: usesLogind)
            do throws(Errno) {
                state.thread = try SystemThread.spawn(name: "guard-sessions") { worker.run() }
            } catch {
                logger.error("session: no thread to lock or end sessions: \(error); sessions asked for are left as they are")
                state.requests.removeAll()
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity

/// One monitor the Guard runs, as `ListMonitors` and `IdentifyMonitor` show it.
package struct MonitorSnapshot: Sendable, Equatable {
    package enum State: String, Sendable {
        /// Its process runs.
        case running
        /// It ended and waits to be started again (``MonitorSnapshot/restartAt``).
        case waiting
        /// Stopped: its session ended or its approval was lifted, and it is
        /// not to run again.
        case stopped
    }

    package var appID: String
    package var user: String
    /// The session it runs in: logind's session id, or `pam-` and the pid of
    /// the process that opened a PAM session.
    package var session: String
    package var state: State
    /// Its process while running; 0 otherwise.
    package var pid: pid_t
    package var startedAt: UnixTime
    /// How often it was started again in this session.
    package var restarts: Int
    /// How it last ended ("signal 9", "exit status 1"), if it has.
    package var ended: String?
    /// When a waiting monitor starts again.
    package var restartAt: UnixTime?
}

/// A child's monitor that keeps ending or being stopped, or a required one
/// kept down (and the child's sessions locked or ended for it), told to the
/// watchers of `WatchMonitorAlerts` (a guardian's desktop agent).
package struct MonitorAlert: Sendable, Equatable {
    package var appID: String
    /// The app's name, from its desktop entry.
    package var appName: String
    package var user: String
    package var session: String
    /// Restarts within the last ``windowSeconds``.
    package var restarts: Int
    package var windowSeconds: Int
    /// How it last ended.
    package var ended: String
    /// How long the Guard waits before starting it again, when it waits.
    package var waitingSeconds: Int?
    /// A required monitor kept down: what was done to the child's sessions.
    package var consequence: SessionConsequence?

    package init(appID: String, appName: String, user: String, session: String, restarts: Int, windowSeconds: Int,
                 ended: String, waitingSeconds: Int?, consequence: SessionConsequence? = nil) {
        self.appID = appID
        self.appName = appName
        self.user = user
        self.session = session
        self.restarts = restarts
        self.windowSeconds = windowSeconds
        self.ended = ended
        self.waitingSeconds = waitingSeconds
        self.consequence = consequence
    }
}

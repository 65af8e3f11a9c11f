#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
/// The monitor this process is: the program an approved app declares in its
/// desktop entry (`X-FamilyControls-Monitor=`), which the Guard runs as the
/// child in each of the child's login sessions and starts again when it ends.
///
/// Linux only: Apple's FamilyControls has no monitor (DeviceActivity runs an
/// app's code there). See ``AuthorizationCenter/monitorContext``.
public struct MonitorContext: Sendable, Hashable {
    /// The app whose monitor this is, as the Guard knows it (its app ID).
    public let appID: String
    /// The child the monitor runs as.
    public let user: String
    /// The login session it runs in: logind's session ID, or `pam-` and the
    /// pid of the process that opened it.
    public let session: String

    init(_ monitor: IdentifiedMonitor) {
        appID = monitor.appID
        user = monitor.user
        session = monitor.session
    }
}

extension AuthorizationCenter {
    /// The monitor this process is, when the Guard started it as the app's
    /// monitor; nil when the app was started any other way (by the child, by
    /// its autostart entry, by a test) (Linux only).
    ///
    /// One program can serve both: the app asks once at launch and, as the
    /// monitor, does the monitor's work instead of showing its window.
    ///
    /// The Guard starts a monitor with `FAMILYCONTROLS_MONITOR=APPID` and
    /// `FAMILYCONTROLS_MONITOR_SESSION=SESSION` in its environment. Without
    /// them the answer is nil at once and the Guard is not asked. With them,
    /// since anyone can set a variable, the Guard is asked
    /// (`IdentifyMonitor`): it answers from the kernel's word on the calling
    /// process, and only a process it started (or one inside its
    /// `flatpak run`) is a monitor. The answer is nil when the Guard says
    /// no, names another app or session, or cannot be reached. The Guard's
    /// answer is kept for the life of the process (a monitor stays one); a
    /// Guard that could not be reached is asked again on the next read.
    public var monitorContext: MonitorContext? {
        get async {
            let (backend, generation) = currentBackend
            guard let claim = backend.monitorClaim else { return nil }
            if let known = knownMonitor(generation: generation) { return known.monitor.map(MonitorContext.init) }
            switch await backend.identifyMonitor() {
            case .success(let found):
                // The Guard's word, and only when it names what the environment says.
                let monitor = found.flatMap { $0.appID == claim.appID && $0.session == claim.session ? $0 : nil }
                remember(MonitorAnswer(monitor: monitor), generation: generation)
                return monitor.map(MonitorContext.init)
            case .failure(let failure):
                record(failure, generation: generation)
                return nil
            }
        }
    }

    /// Whether this process is the app's monitor, started by the Guard
    /// (Linux only): ``monitorContext`` is not nil.
    public var isRunningAsMonitor: Bool {
        get async { await monitorContext != nil }
    }
}
#endif

/// The monitor the Guard says the calling process is (`IdentifyMonitor`).
package struct IdentifiedMonitor: Sendable, Equatable {
    package var appID: String
    package var user: String
    package var session: String

    package init(appID: String, user: String, session: String) {
        self.appID = appID
        self.user = user
        self.session = session
    }
}

/// What the Guard answered to `IdentifyMonitor`, kept by the center: a
/// monitor, or none.
struct MonitorAnswer: Sendable {
    var monitor: IdentifiedMonitor?
}

/// What the environment says the process is: the app and session the Guard
/// named when it started it, until the Guard confirms it.
package struct MonitorClaim: Sendable, Equatable {
    /// `FAMILYCONTROLS_MONITOR`.
    package static let appVariable = "FAMILYCONTROLS_MONITOR"
    /// `FAMILYCONTROLS_MONITOR_SESSION`.
    package static let sessionVariable = "FAMILYCONTROLS_MONITOR_SESSION"

    package var appID: String
    package var session: String

    package init(appID: String, session: String) {
        self.appID = appID
        self.session = session
    }

    /// The claim this process's environment makes; nil unless both variables are set and not empty.
    package static func fromEnvironment() -> MonitorClaim? {
        guard let app = ProcessVariables.value(appVariable), let session = ProcessVariables.value(sessionVariable) else { return nil }
        return MonitorClaim(appID: app, session: session)
    }
}

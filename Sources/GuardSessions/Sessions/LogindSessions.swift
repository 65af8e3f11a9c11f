#if canImport(Glibc)
import Glibc
#endif
internal import CSDLogin
import Synchronization
import SystemKit

/// The login sessions systemd-logind keeps, where it runs: read through
/// libsystemd's sd-login (`sd-login(3)`), and a descriptor that says when
/// they changed (`sd_login_monitor_new(3)`, category `session`).
///
/// Each session becomes the same ``LoginSession`` the PAM module's sessions
/// are, its `sessionID` logind's own, so a session both know is one.
package final class LogindSessions: Sendable {
    /// Sendable as it is used: only under the lock that holds it.
    private struct State: @unchecked Sendable {
        /// The monitor, owned here; sd-login's calls on it are not thread-safe.
        var monitor: OpaquePointer
        /// The sessions last read, answered again when a read fails.
        var last: [LoginSession] = []
        /// The id of every session logind had at that read, monitored or not.
        var lastKnown: Set<String> = []
    }

    private let state: Mutex<State>
    /// The monitor's inotify descriptor, owned by the monitor.
    package let changeDescriptor: CInt
    /// The events to poll `changeDescriptor` for (`POLLIN`).
    package let changeEvents: Int16

    /// Whether systemd-logind runs on this machine: the system was booted
    /// with systemd (`sd_booted(3)`) and `/run/systemd/seats/` exists, as
    /// `sd-login(3)` says to check.
    package static func isRunning() -> Bool {
        csdlogin_is_running() != 0
    }

    /// Whether this libsystemd reports a session's leader
    /// (`sd_session_get_leader`); without it (libsystemd 252) a session's
    /// `leader` is 0.
    package static var readsLeaders: Bool { csdlogin_reads_leaders() != 0 }

    /// Whether this libsystemd reports when a session started
    /// (`sd_session_get_start_time`); without it `openedAt` is when the
    /// Guard first read the session.
    package static var readsStartTimes: Bool { csdlogin_reads_start_times() != 0 }

    /// nil when logind does not run or `sd_login_monitor_new` fails.
    package convenience init?() {
        guard Self.isRunning(), let opened = try? Self.openMonitor() else { return nil }
        self.init(opened: opened)
    }

    /// ``init()``, saying why it failed.
    /// - Throws: ``LogindFailure/notRunning`` when ``isRunning()`` is false,
    ///   ``LogindFailure/monitor(_:)`` when `sd_login_monitor_new` fails.
    package static func open() throws(LogindFailure) -> LogindSessions {
        guard isRunning() else { throw .notRunning }
        return LogindSessions(opened: try openMonitor())
    }

    private init(opened: (monitor: OpaquePointer, descriptor: CInt, events: Int16)) {
        state = Mutex(State(monitor: opened.monitor))
        changeDescriptor = opened.descriptor
        changeEvents = opened.events
    }

    /// `sd_login_monitor_new("session")`, its descriptor and its events.
    private static func openMonitor() throws(LogindFailure) -> (monitor: OpaquePointer, descriptor: CInt, events: Int16) {
        var handle: OpaquePointer?
        let opened = csdlogin_monitor_new(&handle)
        guard opened >= 0, let handle else { throw .monitor(Errno(-opened, operation: "sd_login_monitor_new")) }
        let descriptor = csdlogin_monitor_fd(handle)
        guard descriptor >= 0 else {
            csdlogin_monitor_free(handle)
            throw .monitor(Errno(-descriptor, operation: "sd_login_monitor_get_fd"))
        }
        let events = csdlogin_monitor_events(handle)
        return (handle, descriptor, events > 0 ? Int16(truncatingIfNeeded: events) : Int16(POLLIN))
    }

    deinit {
        state.withLock { csdlogin_monitor_free($0.monitor) }
    }

    /// How long to wait at most for `changeDescriptor`, in milliseconds
    /// (`sd_login_monitor_get_timeout`), nil for no limit.
    package var changeTimeout: CInt? {
        let milliseconds = state.withLock { csdlogin_monitor_timeout_ms($0.monitor) }
        return milliseconds < 0 ? nil : milliseconds
    }

    /// Acknowledges a change (`sd_login_monitor_flush`), so that
    /// `changeDescriptor` is readable again only at the next one.
    package func acknowledgeChange() {
        _ = state.withLock { csdlogin_monitor_flush($0.monitor) }
    }

    /// The sessions logind has now that a monitor should run in: class
    /// `user` (not `greeter`, `lock-screen` or `background`), state `active`
    /// or `online` (not `closing`), oldest first. A session whose fields
    /// cannot be read, or whose user NSS does not know, is left out.
    ///
    /// Each carries its user (name and uid), PAM service, tty, logind's
    /// session id, leader (when ``readsLeaders``), `/run/user/UID` as its
    /// runtime directory when it exists, `unix:path=/run/user/UID/bus` when
    /// that socket exists, its X11 `DISPLAY`, and `wayland-0` as its
    /// `WAYLAND_DISPLAY` when the session is of type `wayland` and that
    /// socket exists in the runtime directory: logind does not record the
    /// Wayland display, so this is the compositor's default name, not a
    /// fact logind states.
    ///
    /// When logind's sessions cannot be listed, or a user's account cannot
    /// be looked up, the sessions last read are answered for them: a passing
    /// failure never reads as every session ended.
    package func current() -> [LoginSession] {
        currentAndKnown().sessions
    }

    /// ``current()``, and the id of every session logind has, those it
    /// leaves out too (a `background` session a service or cron opened, a
    /// greeter's): the PAM session module's word on such a session is not
    /// taken over logind's.
    package func currentAndKnown() -> (sessions: [LoginSession], known: Set<String>) {
        state.withLock { state in
            let records: [LogindRecord]
            do throws(LogindFailure) {
                records = try Self.read()
            } catch {
                return (state.last, state.lastKnown)
            }
            let now = UnixTime.now
            let sessions = records.filter(\.isMonitored).compactMap { record in
                Self.session(from: record, before: state.last, at: now)
            }.sorted { ($0.openedAt, $0.sessionID ?? "") < ($1.openedAt, $1.sessionID ?? "") }
            state.last = sessions
            state.lastKnown = Set(records.map(\.id))
            return (sessions, state.lastKnown)
        }
    }

    /// Every session logind has, as its fields read (`sd_get_sessions(3)`
    /// and the `sd_session_get_*` calls); the shim frees what sd-login
    /// returned.
    package static func read() throws(LogindFailure) -> [LogindRecord] {
        var list: UnsafeMutablePointer<csdlogin_session>?
        let count = csdlogin_sessions(&list)
        guard count >= 0 else { throw .sessions(Errno(-count, operation: "sd_get_sessions")) }
        defer { csdlogin_sessions_free(list, count) }
        guard let list else { return [] }
        return UnsafeBufferPointer(start: list, count: Int(count)).compactMap { (raw: csdlogin_session) -> LogindRecord? in
            guard let id = string(raw.id), let state = string(raw.state), let sessionClass = string(raw.session_class) else {
                return nil
            }
            return LogindRecord(id: id, uid: raw.uid, state: state, sessionClass: sessionClass, type: string(raw.type),
                                service: string(raw.service), tty: string(raw.tty), display: string(raw.display),
                                leader: pid_t(raw.leader),
                                startedAt: raw.started_usec == 0 ? nil : UnixTime(seconds: Double(raw.started_usec) / 1e6))
        }
    }

    private static func string(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// `record` as a session to run in, or nil when NSS does not know its
    /// user; the same session in `last` when NSS cannot be asked. Opened at
    /// logind's start time, else when first read (`now` the first time).
    private static func session(from record: LogindRecord, before last: [LoginSession], at now: UnixTime) -> LoginSession? {
        let found: UserAccount?
        do throws(Errno) {
            found = try UserDatabase.user(id: record.uid)
        } catch {
            return last.first { $0.sessionID == record.id }
        }
        guard let account = found else { return nil }
        let runtime = "/run/user/\(record.uid)"
        let hasRuntime = Self.fileType(at: runtime) == S_IFDIR
        let bus = hasRuntime && Self.fileType(at: runtime + "/bus") == S_IFSOCK ? "unix:path=\(runtime)/bus" : nil
        let wayland = hasRuntime && record.type == "wayland" && Self.fileType(at: runtime + "/wayland-0") == S_IFSOCK
        return LoginSession(user: account.name, uid: record.uid, service: record.service ?? "", tty: record.tty,
                            runtimeDirectory: hasRuntime ? runtime : nil, display: record.display,
                            waylandDisplay: wayland ? "wayland-0" : nil, bus: bus, sessionID: record.id,
                            leader: record.leader,
                            openedAt: record.startedAt ?? last.first { $0.sessionID == record.id }?.openedAt ?? now)
    }

    /// The type bits of what `path` names, not following a last symbolic
    /// link (`lstat(2)`), or nil when nothing is there.
    private static func fileType(at path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }
}

/// One session as logind recorded it, before it is chosen or made a ``LoginSession``.
package struct LogindRecord: Sendable, Equatable {
    package var id: String
    package var uid: UInt32
    /// `online`, `active` or `closing`.
    package var state: String
    /// `user`, `greeter`, `lock-screen`, `background`, …
    package var sessionClass: String
    /// `tty`, `x11`, `wayland`, `mir`, `unspecified`.
    package var type: String?
    package var service: String?
    package var tty: String?
    package var display: String?
    /// 0 when this libsystemd does not report it.
    package var leader: pid_t
    /// nil when this libsystemd does not report it.
    package var startedAt: UnixTime?

    /// Whether a monitor runs in it: a user's own session, open.
    package var isMonitored: Bool {
        sessionClass == "user" && (state == "active" || state == "online")
    }
}

/// Why logind's sessions could not be read.
package enum LogindFailure: Error, Equatable, CustomStringConvertible {
    /// systemd-logind does not run here (``LogindSessions/isRunning()``).
    case notRunning
    /// `sd_login_monitor_new` or `sd_login_monitor_get_fd` failed.
    case monitor(Errno)
    /// `sd_get_sessions` failed.
    case sessions(Errno)

    package var description: String {
        switch self {
        case .notRunning: "systemd-logind does not run on this machine"
        case .monitor(let error): "logind's sessions cannot be watched: \(error)"
        case .sessions(let error): "logind's sessions cannot be listed: \(error)"
        }
    }
}

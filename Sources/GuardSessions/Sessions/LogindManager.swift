#if canImport(Glibc)
import Glibc
#endif
internal import CSDBus
import SystemKit

/// systemd-logind's Manager on the system bus (`org.freedesktop.login1`,
/// through libsystemd's sd-bus in `CSDBus`): the calls that lock or end one
/// of its sessions.
///
/// Not thread-safe (an sd-bus connection is not): one owner, the
/// ``SessionEnforcer``'s thread, which opens one for each batch of work.
final class LogindManager {
    private let handle: OpaquePointer

    /// Connects to the system bus; each call then waits at most `timeout`.
    /// - Throws: ``LogindCallFailure/bus(_:)`` when the bus cannot be reached.
    init(timeout: Duration) throws(LogindCallFailure) {
        var opened: OpaquePointer?
        let milliseconds = CInt(clamping: timeout.components.seconds * 1000
            + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result = csdbus_logind_open(&opened, milliseconds)
        guard result >= 0, let opened else { throw .bus(Errno(-result, operation: "sd_bus_open_system")) }
        handle = opened
    }

    deinit {
        csdbus_logind_free(handle)
    }

    /// `LockSession(id)`: logind signals the session's screen locker.
    func lock(_ id: String) throws(LogindCallFailure) {
        try check(csdbus_logind_lock_session(handle, id), "LockSession")
    }

    /// `TerminateSession(id)`: logind stops the session's scope.
    func terminate(_ id: String) throws(LogindCallFailure) {
        try check(csdbus_logind_terminate_session(handle, id), "TerminateSession")
    }

    /// The session's `LockedHint`: whether its screen locker says it is locked.
    func isLocked(_ id: String) throws(LogindCallFailure) -> Bool {
        let result = csdbus_logind_locked_hint(handle, id)
        try check(result, "LockedHint")
        return result == 1
    }

    /// The session's `Leader` property.
    func leader(of id: String) throws(LogindCallFailure) -> pid_t {
        let result = csdbus_logind_leader(handle, id)
        try check(result, "Leader")
        return pid_t(result)
    }

    private func check(_ result: CInt, _ operation: String) throws(LogindCallFailure) {
        guard result < 0 else { return }
        if result == -ENXIO { throw .noSuchSession }
        throw .call(Errno(-result, operation: operation))
    }
}

/// Why a call to logind failed.
enum LogindCallFailure: Error, Equatable, CustomStringConvertible {
    /// The system bus could not be reached.
    case bus(Errno)
    /// logind knows no session of that id (it ended, or never was logind's).
    case noSuchSession
    /// The call failed otherwise (refused, timed out, logind gone).
    case call(Errno)

    var description: String {
        switch self {
        case .bus(let error): "the system bus cannot be reached: \(error)"
        case .noSuchSession: "logind has no such session"
        case .call(let error): "logind refused or did not answer: \(error)"
        }
    }
}

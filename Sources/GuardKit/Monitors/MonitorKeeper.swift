#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit

/// Runs every approved app's monitor in each session of its child, starts
/// it again when it ends, and stops it when the session ends or the approval
/// is lifted.
package final class MonitorKeeper: Sendable {
    private let alertListeners = Mutex<(next: Int, all: [Int: @Sendable (MonitorAlert) -> Void])>((0, [:]))

    package init() {}

    /// The monitors now, running or waiting.
    package func list() -> [MonitorSnapshot] { [] }

    /// The monitor `pid` is, or runs inside (a descendant of a monitor's
    /// process, as a Flatpak app's sandboxed process is), if its uid is the
    /// monitor's user.
    package func monitor(containing pid: pid_t, uid: UInt32) -> MonitorSnapshot? { nil }

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
}

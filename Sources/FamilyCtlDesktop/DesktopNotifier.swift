#if canImport(Glibc)
import Glibc
#endif
internal import CSDBus
import FamilyCtl
import SystemKit

/// The desktop's notification server (`org.freedesktop.Notifications` on the
/// session bus), reached through libsystemd's sd-bus (the `CSDBus` shim).
///
/// Signals are believed only from the unique name that owned the server's
/// name when the notifier opened: any other client of the bus may send an
/// `ActionInvoked` of its own, and must not decide a request.
///
/// Not thread-safe: one owner, the thread that opened it (sd-bus connections
/// are not).
package final class DesktopNotifier: NotificationServer {
    private let handle: OpaquePointer

    /// Connects to the session bus and finds the server.
    /// - Throws: ``NotificationServerUnavailable`` when there is no session
    ///   bus, nobody owns the name, or the bus does not answer within `timeout`.
    package init(timeout: Duration = .seconds(5)) throws(NotificationServerUnavailable) {
        var handle: OpaquePointer?
        let milliseconds = CInt(clamping: timeout.components.seconds * 1000)
        let result = csdbus_notifier_open(&handle, milliseconds)
        guard result == 0, let handle else {
            switch -result {
            case ENOMEDIUM: throw NotificationServerUnavailable(description: "no session bus")
            case ESRCH: throw NotificationServerUnavailable(description: "nothing on the session bus owns org.freedesktop.Notifications")
            default: throw NotificationServerUnavailable(description: "the session bus failed: \(String(cString: strerror(-result)))")
            }
        }
        self.handle = handle
    }

    deinit { csdbus_notifier_free(handle) }

    /// The unique bus name of the server listened to.
    package var owner: String { String(cString: csdbus_notifier_owner(handle)) }

    /// Posts a notification, or replaces `replacing`.
    /// - Parameters:
    ///   - summary: plain text.
    ///   - body: already escaped for the server's markup.
    ///   - decidable: with the "Approve" and "Deny" actions, kept until withdrawn.
    /// - Returns: the server's id for it.
    package func notify(summary: String, body: String, decidable: Bool, replacing: UInt32) throws(Errno) -> UInt32 {
        var id: UInt32 = 0
        let result = csdbus_notify(handle, replacing, summary, body, decidable ? 1 : 0, decidable ? 1 : 0, &id)
        guard result == 0 else { throw Errno(-result, operation: "Notify") }
        return id
    }

    /// Withdraws notification `id` (`CloseNotification`).
    package func close(_ id: UInt32) throws(Errno) {
        let result = csdbus_close_notification(handle, id)
        guard result == 0 else { throw Errno(-result, operation: "CloseNotification") }
    }

    /// Waits for the bus or `descriptor` to be readable, at most `timeout`,
    /// and takes in what the bus sent.
    /// - Throws: ``Errno`` when the bus connection ended.
    package func wait(alsoFor descriptor: CInt, timeout: Duration?) throws(Errno) {
        let milliseconds: CInt = timeout.map { CInt(clamping: $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000) } ?? -1
        let result = csdbus_notifier_wait(handle, descriptor, milliseconds)
        guard result == 0 else { throw Errno(-result, operation: "sd_bus_process") }
    }

    /// The oldest signal heard and not yet taken.
    package func nextEvent() -> NotificationEvent? {
        var event = csdbus_event()
        guard csdbus_next_event(handle, &event) == 1 else { return nil }
        switch event.kind {
        case CSDBUS_EVENT_ACTION:
            let action = withUnsafeBytes(of: event.action) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            return .action(id: event.id, action: action)
        default:
            return .closed(id: event.id)
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A desktop's notification server (`org.freedesktop.Notifications`) as
/// ``NotificationAgent`` uses it. The real one, over libsystemd's sd-bus, is
/// the `familycontrols-agent` program's own (its `DesktopNotifier`), so that
/// familyctl, which every other verb runs, does not load libsystemd.
///
/// Not thread-safe: one owner, the thread that opened it.
package protocol NotificationServer: AnyObject {
    /// The unique bus name of the server listened to.
    var owner: String { get }

    /// Posts a notification, or replaces `replacing` (0: none).
    /// - Parameters:
    ///   - summary: plain text.
    ///   - body: already escaped for the server's markup.
    ///   - decidable: with the "Approve" and "Deny" actions, kept until withdrawn.
    /// - Returns: the server's id for it.
    func notify(summary: String, body: String, decidable: Bool, replacing: UInt32) throws(Errno) -> UInt32

    /// Withdraws notification `id`.
    func close(_ id: UInt32) throws(Errno)

    /// Waits for the server or `descriptor` to be readable, at most
    /// `timeout`, and takes in what the server sent.
    /// - Throws: ``Errno`` when the connection to the server ended.
    func wait(alsoFor descriptor: CInt, timeout: Duration?) throws(Errno)

    /// The oldest event heard and not yet taken.
    func nextEvent() -> NotificationEvent?
}

extension NotificationServer {
    /// Posts a new notification.
    func notify(summary: String, body: String, decidable: Bool) throws(Errno) -> UInt32 {
        try notify(summary: summary, body: body, decidable: decidable, replacing: 0)
    }
}

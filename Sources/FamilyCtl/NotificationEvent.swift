/// What a desktop's notification server said (``NotificationServer``).
package enum NotificationEvent: Equatable, Sendable {
    /// The person chose `action` ("approve", "deny") on notification `id`.
    case action(id: UInt32, action: String)
    /// Notification `id` is gone (expired, dismissed, or closed by a call).
    case closed(id: UInt32)
}

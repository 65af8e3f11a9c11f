/// Why there is no desktop notification server to talk to
/// (``NotificationServer``).
package struct NotificationServerUnavailable: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) {
        self.description = description
    }
}

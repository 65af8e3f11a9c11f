import Synchronization

/// Warnings about the machine that root should see until they are fixed
/// (a child who can become root, say), as of the last start or reload;
/// `familyctl status` shows them to root.
package final class StandingWarnings: Sendable {
    private let lines = Mutex<[String]>([])

    package init() {}

    package var current: [String] { lines.withLock { $0 } }

    package func replace(with warnings: [String]) {
        lines.withLock { $0 = warnings }
    }
}

import GuardSessions

/// Tells a child something in their sessions: how long they have left
/// before their time is up. The Guard's is a ``TerminalMessenger``.
package protocol SessionMessenger: Sendable {
    /// Shows `message` (one line, the Guard's own words) to the user of
    /// `sessions` (all one child's), wherever they can see it.
    /// - Returns: where it was shown (`/dev/pts/3`…), for the log.
    func tell(_ message: String, in sessions: [MonitorSession]) -> [String]
}

import GuardIdentity
/// Locks or ends login sessions. The Guard holds one; it is the only code
/// that acts on a session, so every rule that costs a session costs it the
/// same way, logged the same way.
package protocol SessionEnforcing: Sendable {
    /// Locks or ends each of `sessions`. Returns at once: the work is done on
    /// the enforcer's own thread, and each outcome is logged naming `reason`.
    /// - Parameters:
    ///   - consequence: lock or end.
    ///   - sessions: the sessions, logind's (with a `sessionID`) or the PAM module's.
    ///   - reason: why, for the log and the audit trail: "the required monitor of org.example.App was kept down".
    func enforce(_ consequence: SessionConsequence, on sessions: [MonitorSession], reason: String)
}

/// What a child's sessions are made to bear when a rule says they may not go
/// on as they are: a required monitor kept from running, and time
/// that is up. Each rule decides when it holds, ``SessionRules`` what a session
/// bears when several do, and one place acts (a
/// ``SessionEnforcing``).
package enum SessionConsequence: String, Sendable, Hashable, CaseIterable {
    /// The session's screen is locked (logind `LockSession`); the session goes on behind it.
    case lock
    /// The session is ended (logind `TerminateSession`; without logind, its
    /// processes, after a grace period).
    case end
}

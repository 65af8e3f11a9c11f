/// How an audited event ended, in a word or two an administrator reads.
///
/// An open set, as ``AuditAction`` is: the named constants are the Guard's
/// own, and the store keeps any other non-empty text as it is (a lock's
/// state, such as `unenforced: REASON`, or a row an earlier version wrote).
package struct AuditOutcome: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        self.rawValue = value
    }

    package var description: String { rawValue }

    /// Whether the event changed nothing (a refusal, no effect, a cancel,
    /// a timeout): the same such event again is counted on one row.
    package var changesNothing: Bool {
        [Self.refused, .noEffect, .canceled, .timedOut, .expired, .restarted, .continued].contains(self)
    }

    /// A monitor that ended was started again at once; the status quo, restored.
    package static let restarted = AuditOutcome(rawValue: "restarted")
    /// A stopped monitor was continued.
    package static let continued = AuditOutcome(rawValue: "continued")
    /// A request began: the alert is shown.
    package static let started = AuditOutcome(rawValue: "started")
    /// A request waits for a parent or guardian to decide it from their own session.
    package static let pending = AuditOutcome(rawValue: "pending")
    /// Approved, by the actor.
    package static let approved = AuditOutcome(rawValue: "approved")
    /// Denied ("Don't Allow"), by the actor.
    package static let denied = AuditOutcome(rawValue: "denied")
    /// The approval was lifted.
    package static let revoked = AuditOutcome(rawValue: "revoked")
    /// Refused before anything was asked: not a child, a quota, a copy elsewhere.
    package static let refused = AuditOutcome(rawValue: "refused")
    /// Nothing to do: not approved, or approved meanwhile.
    package static let noEffect = AuditOutcome(rawValue: "no effect")
    /// The app gave up, hung up, or someone pressed cancel.
    package static let canceled = AuditOutcome(rawValue: "canceled")
    /// A prompt went unanswered for `PromptTimeout=`.
    package static let timedOut = AuditOutcome(rawValue: "timed out")
    /// Nobody decided a pending request within `PendingTimeout=`.
    package static let expired = AuditOutcome(rawValue: "expired")
    /// PAM refused one attempt (a wrong password, say).
    package static let authenticationFailed = AuditOutcome(rawValue: "authentication failed")
    /// `MaxAttempts` attempts failed.
    package static let tooManyFailures = AuditOutcome(rawValue: "too many failures")
    /// A PAM module said no more tries.
    package static let tooManyTries = AuditOutcome(rawValue: "too many tries")
    /// The password could not be checked: the user directory (LDAP, SSSD)
    /// could not be reached. Not counted as a failed attempt.
    package static let directoryUnavailable = AuditOutcome(rawValue: "directory unavailable")
    /// The pam.d service is missing or broken.
    package static let pamError = AuditOutcome(rawValue: "pam error")
    /// The individual has no password or other way to authenticate.
    package static let noAuthenticationMethod = AuditOutcome(rawValue: "no authentication method")
    /// The lock or unlock could not be done.
    package static let failed = AuditOutcome(rawValue: "failed")
    /// A new version of an approved app replaced the old one, locked.
    package static let swappedIn = AuditOutcome(rawValue: "swapped in")
    /// A lock was released.
    package static let unlocked = AuditOutcome(rawValue: "unlocked")
    /// `familyctl locks verify` repaired what it found.
    package static let repaired = AuditOutcome(rawValue: "repaired")
    /// `familyctl locks verify --no-repair` found drift.
    package static let driftFound = AuditOutcome(rawValue: "drift found")
    /// A child graduated.
    package static let graduated = AuditOutcome(rawValue: "graduated")
    /// A child graduated with nothing approved.
    package static let noApprovals = AuditOutcome(rawValue: "no approvals")
    /// A record of a user who no longer exists was removed.
    package static let forgotten = AuditOutcome(rawValue: "forgotten")
}

extension AuditOutcome {
    /// A one-time code was enrolled.
    package static let enrolled = AuditOutcome(rawValue: "enrolled")
    /// A one-time code was removed.
    package static let removed = AuditOutcome(rawValue: "removed")
}

extension AuditOutcome {
    /// Time limits took effect.
    package static let applied = AuditOutcome(rawValue: "applied")
    /// More time was given.
    package static let granted = AuditOutcome(rawValue: "granted")
}

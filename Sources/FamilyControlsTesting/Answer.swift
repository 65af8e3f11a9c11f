import FamilyControls

/// How the person at the authentication sheet answers, or how the Guard fails.
public enum Answer: Sendable, Hashable {
    /// The guardian, or the individual, authenticates and approves. For a
    /// revoke: the guardian authenticates and the approval is lifted. For
    /// looser login limits or more time: a parent or guardian approves them
    /// (all the minutes asked).
    case approve
    /// "Don't Allow": the request fails with
    /// ``FamilyControlsError/authorizationCanceled`` and the status becomes
    /// `.denied`. For a revoke: the guardian refuses, and it fails the same way.
    case deny
    /// The sheet is closed or the authentication fails: the call fails with
    /// ``FamilyControlsError/authorizationCanceled`` and nothing changes.
    case cancel
    /// The Guard fails with `error`, any code, and nothing changes;
    /// `lastErrorMessage` is the error's description.
    case fail(FamilyControlsError)
}

/// A request or revoke waiting at the authentication sheet.
public struct Sheet: Sendable {
    /// What the sheet is for.
    public enum Purpose: Sendable, Hashable {
        /// A request for `member`.
        case request(FamilyControlsMember)
        /// A revoke of a child's approval, which a guardian must authenticate.
        case revoke
        /// Login limits looser than those in force (Linux only), which a
        /// parent or guardian decides from their own session.
        case timeLimits(LoginLimits)
        /// More session time today (Linux only), which a parent or guardian
        /// decides from their own session.
        case moreTime(minutes: Int, reason: String?)
    }

    /// What the sheet is for.
    public let purpose: Purpose

    let id: Int
    let engine: InMemoryGuardEngine

    /// Answers the sheet; the app's call then ends. A sheet takes one answer;
    /// later ones are ignored.
    public func answer(_ answer: Answer) {
        engine.answer(sheet: id, with: answer)
    }
}

/// A wait that ended without what it waited for.
public struct TimedOut: Error, CustomStringConvertible {
    /// What did not happen.
    public let waitingFor: String
    /// How long the wait was.
    public let timeout: Duration

    public var description: String { "timed out after \(timeout) waiting for \(waitingFor)" }
}

import GuardIdentity
/// What became of one session a ``SessionEnforcer`` was asked to lock or
/// end: the line it logs, kept also for ``SessionEnforcer/recentOutcomes()``.
package struct SessionEnforcement: Sendable, Equatable, CustomStringConvertible {
    /// What was done.
    package enum Result: Sendable, Equatable {
        /// logind locked it: its screen locker says so (`LockedHint`).
        case locked
        /// logind ended it (`TerminateSession`) and its leader is gone.
        case terminated
        /// Its processes were signalled: `signalled` got `SIGTERM` (and the
        /// user's `SIGHUP`), `killed` needed `SIGKILL` after the grace
        /// period, `surviving` still ran after every round (0 unless a
        /// process cannot be killed, as one in uninterruptible sleep).
        case ended(signalled: Int, killed: Int, surviving: Int)
        /// The session was over before anything was done.
        case alreadyOver(String)
        /// Nothing could be done; why.
        case failed(String)
    }

    /// The session's name (logind's id, or `pam-` and its leader's pid).
    package var session: String
    package var user: String
    /// What was asked.
    package var consequence: SessionConsequence
    package var result: Result
    /// The caller's reason.
    package var reason: String
    /// What changed on the way, when something did: "a lock needs logind; ended instead".
    package var note: String?

    package var description: String {
        let what = switch result {
        case .locked: "locked by logind"
        case .terminated: "ended by logind"
        case .ended(let signalled, let killed, let surviving):
            "ended (\(signalled) processes signalled, \(killed) killed after the grace period"
                + (surviving > 0 ? ", \(surviving) still running" : "") + ")"
        case .alreadyOver(let why): "already over (\(why))"
        case .failed(let why): "could not be \(consequence == .lock ? "locked" : "ended"): \(why)"
        }
        return "session \(session) of \(user) \(what)" + (note.map { "; \($0)" } ?? "") + ": \(reason)"
    }
}

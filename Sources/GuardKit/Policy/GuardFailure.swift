import FamilyControlsModel

/// Why the Guard refused or could not finish a call: one of Apple's
/// `FamilyControlsError` cases, or an administrator-side refusal, with a
/// message a person can act on. Sent to clients as a Varlink error.
package struct GuardFailure: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Kind: Hashable, Sendable {
        case familyControls(FamilyControlsError)
        /// The caller may not do this (not root, not this child's guardian).
        case permissionDenied
        /// No such authorization, user or app.
        case notFound
        /// A bound on one connection was reached (its subscriptions); the call did nothing.
        case limitReached
    }

    package var kind: Kind
    package var message: String
    /// The status the request left behind when it is not the one before
    /// (`denied` after "Don't Allow"), so the app can show it.
    package var resultingStatus: AuthorizationStatus?

    package init(_ error: FamilyControlsError, _ message: String) {
        kind = .familyControls(error)
        self.message = message
    }

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The qualified Varlink error name.
    package var varlinkName: String {
        switch kind {
        case .familyControls(let error): error.varlinkName
        case .permissionDenied: GuardEndpoint.qualified("PermissionDenied")
        case .notFound: GuardEndpoint.qualified("NotFound")
        case .limitReached: GuardEndpoint.qualified("LimitReached")
        }
    }

    package var description: String { "\(varlinkName): \(message)" }

    static func canceled(_ message: String) -> GuardFailure { GuardFailure(.authorizationCanceled, message) }
    static func internalError(_ message: String) -> GuardFailure { GuardFailure(.unavailable, message) }
    /// The Guard's threads are all taken (by people typing, most likely) and so is its queue.
    static let busy = GuardFailure(.unavailable, "the Guard is busy with other callers; try again in a moment")
    /// Refused as busy for `reason`, a bound of the caller's own (too many under way at once).
    static func busy(_ reason: String) -> GuardFailure { GuardFailure(.unavailable, "the Guard is busy: \(reason)") }
}

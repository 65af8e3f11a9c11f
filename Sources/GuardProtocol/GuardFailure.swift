import FamilyControlsModel
import Varlink

/// Why the Guard refused or could not finish a call: one of Apple's
/// `FamilyControlsError` cases, or an administrator-side refusal, with a
/// message a person can act on.
///
/// The one failure type of every side: the Guard throws it and sends it as
/// ``GuardError`` (``wire``); familyctl and the app library read it back from
/// the error reply (``init(remote:)``), and the in-memory Guard of
/// `FamilyControlsTesting` returns it as the Guard would.
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

    package init(_ error: FamilyControlsError, _ message: String, resultingStatus: AuthorizationStatus? = nil) {
        self.init(.familyControls(error), message, resultingStatus: resultingStatus)
    }

    package init(_ kind: Kind, _ message: String, resultingStatus: AuthorizationStatus? = nil) {
        self.kind = kind
        self.message = message
        self.resultingStatus = resultingStatus
    }

    /// The public error an app sees: the case itself, or for an
    /// administrator-side refusal (which no app call can meet) `networkError`,
    /// the Guard having answered something the app did not ask for.
    package var error: FamilyControlsError {
        if case .familyControls(let error) = kind { return error }
        return .networkError
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

    package static func canceled(_ message: String) -> GuardFailure { GuardFailure(.authorizationCanceled, message) }
    package static func internalError(_ message: String) -> GuardFailure { GuardFailure(.unavailable, message) }
    /// The Guard's threads are all taken (by people typing, most likely) and so is its queue.
    package static let busy = GuardFailure(.unavailable, "the Guard is busy with other callers; try again in a moment")
    /// Refused as busy for `reason`, a bound of the caller's own (too many under way at once).
    package static func busy(_ reason: String) -> GuardFailure { GuardFailure(.unavailable, "the Guard is busy: \(reason)") }
}

extension GuardFailure {
    /// The failure as the interface's error.
    package var wire: GuardError {
        switch kind {
        case .familyControls(let error):
            switch error {
            case .restricted: .restricted(message: message)
            case .unavailable: .unavailable(message: message)
            case .invalidAccountType: .invalidAccountType(message: message)
            case .invalidArgument: .invalidArgument(message: message)
            case .authorizationConflict: .authorizationConflict(message: message)
            case .authorizationCanceled: .authorizationCanceled(message: message, status: resultingStatus.map(Guard.Status.init))
            case .networkError: .networkError(message: message)
            // The Guard has no data-access calls, so it never fails this way;
            // the interface declares no such error.
            case .unauthorized: .invalidArgument(message: message)
            case .authenticationMethodUnavailable: .authenticationMethodUnavailable(message: message)
            }
        case .permissionDenied: .permissionDenied(message: message)
        case .notFound: .notFound(message: message)
        case .limitReached: .limitReached(message: message)
        }
    }

    /// The failure the interface's error `error` carries.
    package init(_ error: GuardError) {
        switch error {
        case .restricted(let message): self.init(.restricted, message)
        case .unavailable(let message): self.init(.unavailable, message)
        case .invalidAccountType(let message): self.init(.invalidAccountType, message)
        case .invalidArgument(let message): self.init(.invalidArgument, message)
        case .authorizationConflict(let message): self.init(.authorizationConflict, message)
        case .authorizationCanceled(let message, let status):
            self.init(.authorizationCanceled, message, resultingStatus: status.map(AuthorizationStatus.init))
        case .networkError(let message): self.init(.networkError, message)
        case .authenticationMethodUnavailable(let message): self.init(.authenticationMethodUnavailable, message)
        case .permissionDenied(let message): self.init(.permissionDenied, message)
        case .notFound(let message): self.init(.notFound, message)
        case .limitReached(let message): self.init(.limitReached, message)
        }
    }

    /// The failure in an error reply from the Guard; nil when the reply is
    /// not one of the Guard's errors (an `org.varlink.service` error, a name
    /// no interface of ours declares).
    ///
    /// A Guard error whose parameters are not what the interface says keeps
    /// its case, with its name as the message; so does `Unauthorized`, which
    /// `FamilyControlsError` has and the interface does not declare.
    package init?(remote: VarlinkError) {
        let decoded: GuardError?
        do throws(ProtocolDecodingError) {
            decoded = try GuardError(name: remote.name, parameters: remote.parameters)
        } catch {
            decoded = nil
        }
        if let decoded {
            self.init(decoded)
        } else if let error = FamilyControlsError(varlinkName: remote.name) {
            self.init(error, remote.name)
        } else if let kind = [Kind.permissionDenied, .notFound, .limitReached]
            .first(where: { GuardFailure($0, "").varlinkName == remote.name }) {
            self.init(kind, remote.name)
        } else {
            return nil
        }
    }
}

/// An error that occurs while requesting or revoking authorization.
///
/// The cases and codes are Apple's (0–8) and the domain is
/// `FamilyControls.FamilyControlsError`; unlike Apple's, every case has a
/// description a person can act on.
public enum FamilyControlsError: Int, Error, Hashable, Sendable, CaseIterable {
    /// The device or account is restricted from providing parental controls.
    case restricted = 0
    /// The system failed to set up the Family Controls framework (no Guard reachable).
    case unavailable = 1
    /// The account is not of the kind the request needs (not a child in the family).
    case invalidAccountType = 2
    /// The app or the request is not valid (no capability declared, say).
    case invalidArgument = 3
    /// Another app already manages parental controls in a conflicting way.
    case authorizationConflict = 4
    /// The guardian or individual canceled, refused, or failed to authenticate.
    case authorizationCanceled = 5
    /// The Guard could not be reached reliably.
    case networkError = 6
    /// The person has no way to authenticate (no usable password, no module).
    case authenticationMethodUnavailable = 7
    /// The app must be authorized, with data access, for what it asked (Apple's SDK 26.4).
    ///
    /// Apple reports it from the activity-data interfaces that need
    /// `approvedWithDataAccess` (``AuthorizationStatus/ReservedStatus``). Linux has no such
    /// interface, so neither the Guard nor the library reports it today; the
    /// case exists so that code written for the newer SDK compiles, and maps
    /// from the Guard's `org.familycontrols.guard.Unauthorized` should a Guard send it.
    case unauthorized = 8

    /// The Varlink error name the Guard uses for this case.
    public var varlinkName: String {
        GuardEndpoint.qualified(caseName.prefix(1).uppercased() + caseName.dropFirst())
    }

    /// The Swift spelling of the case (`authorizationCanceled`).
    public var caseName: String {
        switch self {
        case .restricted: "restricted"
        case .unavailable: "unavailable"
        case .invalidAccountType: "invalidAccountType"
        case .invalidArgument: "invalidArgument"
        case .authorizationConflict: "authorizationConflict"
        case .authorizationCanceled: "authorizationCanceled"
        case .networkError: "networkError"
        case .authenticationMethodUnavailable: "authenticationMethodUnavailable"
        case .unauthorized: "unauthorized"
        }
    }

    /// The case whose ``varlinkName`` is `name`, if any.
    public init?(varlinkName name: String) {
        guard let match = Self.allCases.first(where: { $0.varlinkName == name }) else { return nil }
        self = match
    }
}

extension FamilyControlsError {
    /// A sentence for a person; the app library makes it the error's
    /// `LocalizedError` description.
    public var errorDescription: String? {
        switch self {
        case .restricted:
            "Parental controls are restricted on this system; ask its administrator."
        case .unavailable:
            "Family Controls is unavailable: the Guard service (familycontrolsd) cannot be reached."
        case .invalidAccountType:
            "This account cannot be authorized this way: a child authorization needs a user listed as a child in the family configuration."
        case .invalidArgument:
            "The request is not valid: the app must run from a managed app directory and declare X-FamilyControls=true in its desktop entry."
        case .authorizationConflict:
            "Another authorization request or setting conflicts with this one; try again."
        case .authorizationCanceled:
            "The authorization was canceled, refused, or the authentication failed."
        case .networkError:
            "The connection to the Guard service failed during the request."
        case .authenticationMethodUnavailable:
            "No authentication method is available for this account (for example, it has no usable password)."
        case .unauthorized:
            "This app is not authorized for this: it must first be approved to provide parental controls with access to activity data."
        }
    }
}

extension FamilyControlsError: CustomStringConvertible {
    public var description: String { "\(caseName) (\(rawValue)): \(errorDescription ?? "")" }
}

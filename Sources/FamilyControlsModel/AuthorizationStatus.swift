/// The status of an app's authorization to provide parental controls.
///
/// The raw values match Apple's: `notDetermined` 0, `denied` 1, `approved` 2.
public enum AuthorizationStatus: Int, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// No guardian or individual has decided yet, or the authorization was revoked.
    case notDetermined = 0
    /// A guardian chose "Don't Allow".
    case denied = 1
    /// A guardian, or the individual, approved the app.
    case approved = 2

    public var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .approved: "approved"
        }
    }

    /// Parses the wire and command-line spelling (`notDetermined`, `denied`, `approved`).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

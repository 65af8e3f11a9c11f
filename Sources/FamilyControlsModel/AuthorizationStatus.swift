/// The status of an app's authorization to provide parental controls.
///
/// The raw values match Apple's: `notDetermined` 0, `denied` 1, `approved` 2,
/// `approvedWithDataAccess` 3.
public enum AuthorizationStatus: Int, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// No guardian or individual has decided yet, or the authorization was revoked.
    case notDetermined = 0
    /// A guardian chose "Don't Allow".
    case denied = 1
    /// A guardian, or the individual, approved the app.
    case approved = 2
    /// Approved, and allowed to read the family's activity data (Apple's SDK 26.4).
    ///
    /// On Apple platforms this adds access to untokenized activity data
    /// (installed apps, visited domains) to everything `approved` allows. Linux
    /// has no activity-data interface for it to open, so the Guard never grants
    /// it: no request, administrator or store produces it today. The case
    /// exists so that code written for the newer SDK compiles and behaves, and
    /// its wire name, `approvedWithDataAccess`, is reserved for a Guard that
    /// grants it. Handle it as `approved`: it includes everything `approved` allows.
    case approvedWithDataAccess = 3

    public var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .approved: "approved"
        case .approvedWithDataAccess: "approvedWithDataAccess"
        }
    }

    /// Parses the wire and command-line spelling (`notDetermined`, `denied`,
    /// `approved`, `approvedWithDataAccess`).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

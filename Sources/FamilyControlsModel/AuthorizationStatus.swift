/// The status of an app's authorization to provide parental controls.
///
/// The raw values match Apple's: `notDetermined` 0, `denied` 1, `approved` 2,
/// `approvedWithDataAccess` 3. A status is one of the first three: a `switch`
/// over `.notDetermined`, `.denied` and `.approved` is exhaustive, as in
/// Apple's reference text. Code written for Apple's SDK 26.4 compiles as well:
/// see ``ReservedStatus`` for `approvedWithDataAccess`, which the Guard never
/// grants.
public enum AuthorizationStatus: Int, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// No guardian or individual has decided yet, or the authorization was revoked.
    case notDetermined = 0
    /// A guardian chose "Don't Allow".
    case denied = 1
    /// A guardian, or the individual, approved the app.
    case approved = 2
    /// Approved, and allowed to read the family's activity data (Apple's SDK
    /// 26.4). No status is ever this: see ``ReservedStatus``.
    ///
    /// Unavailable, the case is not needed for a `switch` to be exhaustive,
    /// and no code can make a status of it; `case .approvedWithDataAccess:` in
    /// a `switch` or an `if case` compiles, without a warning, and never matches.
    @available(*, unavailable, message: "the Guard never grants approvedWithDataAccess: Linux has no activity-data interface")
    case approvedWithDataAccess = 3

    /// The three statuses a status can be: `notDetermined`, `denied`, `approved`.
    public static var allCases: [AuthorizationStatus] { [.notDetermined, .denied, .approved] }

    public var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .approved: "approved"
        }
    }

    /// Parses the wire and command-line spelling (`notDetermined`, `denied`,
    /// `approved`). The reserved `approvedWithDataAccess` is no status and
    /// parses to nil.
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

extension AuthorizationStatus {
    /// `approvedWithDataAccess`, the status Apple's SDK 26.4 added, which the
    /// Guard never grants.
    ///
    /// On Apple platforms it adds access to untokenized activity data
    /// (installed apps, visited domains) to everything `approved` allows. Linux
    /// has no activity-data interface for it to open, so the Guard never grants
    /// it and no ``AuthorizationStatus`` holds it. Its raw value 3 and its wire
    /// name `approvedWithDataAccess` are reserved for a Guard that grants it:
    /// neither decodes to a status.
    ///
    /// Code written for the newer SDK compiles and behaves, in Swift 5 and
    /// Swift 6 language modes: `case .approvedWithDataAccess:` in a `switch`
    /// or an `if case` never matches (the enumeration's unavailable case);
    /// `status == .approvedWithDataAccess` is false and
    /// `status != .approvedWithDataAccess` true for every status (the
    /// operators here). A status cannot be made of it:
    /// `let status: AuthorizationStatus = .approvedWithDataAccess` does not compile.
    public struct ReservedStatus: Hashable, Sendable, CustomStringConvertible {
        /// Apple's raw value for the status.
        public let rawValue: Int
        /// The status's name, as Apple's SDK and the reserved wire name spell it.
        public let description: String

        private init(rawValue: Int, description: String) {
            self.rawValue = rawValue
            self.description = description
        }

        /// Approved with access to activity data: what `.approvedWithDataAccess`
        /// names in a comparison with a status.
        public static var approvedWithDataAccess: Self { Self(rawValue: 3, description: "approvedWithDataAccess") }

        /// No status equals a reserved one.
        public static func == (status: AuthorizationStatus, reserved: Self) -> Bool { false }
        /// No status equals a reserved one.
        public static func == (reserved: Self, status: AuthorizationStatus) -> Bool { false }
        /// Every status differs from a reserved one.
        public static func != (status: AuthorizationStatus, reserved: Self) -> Bool { true }
        /// Every status differs from a reserved one.
        public static func != (reserved: Self, status: AuthorizationStatus) -> Bool { true }
        /// No status, and no missing status, equals a reserved one.
        public static func == (status: AuthorizationStatus?, reserved: Self) -> Bool { false }
        /// Every status, and a missing status, differs from a reserved one.
        public static func != (status: AuthorizationStatus?, reserved: Self) -> Bool { true }
    }
}

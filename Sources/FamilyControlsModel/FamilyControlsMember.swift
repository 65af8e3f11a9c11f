/// Who an authorization is for: a child, whom a guardian authorizes, or an
/// individual, who authorizes themself.
///
/// The raw values match Apple's: `child` 0, `individual` 1.
public enum FamilyControlsMember: Int, Codable, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A child in the family; a guardian authenticates, and the app is locked against deletion.
    case child = 0
    /// A person authorizing themself; nothing is locked.
    case individual = 1

    public var description: String {
        switch self {
        case .child: "child"
        case .individual: "individual"
        }
    }

    /// Parses the wire and command-line spelling (`child`, `individual`).
    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

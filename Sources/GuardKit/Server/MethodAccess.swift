/// Who may call a method of the Guard: the method table's third column.
///
/// What the caller's uid alone decides (``root``) is checked by the table
/// before the call's parameters are even read, one place for every such
/// method. What depends on the family or the call (a guardian of this child,
/// the app the kernel says is calling) is decided where that is known (the
/// policy, the request's own flow), and this names the rule it applies.
/// ARCHITECTURE.md's "Who may call" column starts with ``summary``
/// (`GuardMethodTableTests` holds the two to each other).
enum MethodAccess: String, Sendable, CaseIterable {
    /// A process the Guard identifies as a managed app from the kernel.
    case managedApp
    /// An approved child app, its staged version beside it.
    case approvedChildApp
    /// The connection a request is under way on.
    case requestConnection
    /// Anyone, each seeing only what they administer or own.
    case anyone
    /// Root, or a guardian of the child concerned.
    case rootOrGuardian
    /// A guardian their own, root anyone's.
    case guardianOwnOrRoot
    /// A guardian of someone, never root.
    case guardianNotRoot
    /// Root alone: refused by the table for every other caller.
    case root

    /// How ARCHITECTURE.md's column begins for a method of this access.
    var summary: String {
        switch self {
        case .managedApp: "a managed app"
        case .approvedChildApp: "an approved child app"
        case .requestConnection: "the connection a request is under way on"
        case .anyone: "anyone"
        case .rootOrGuardian: "root, or a guardian"
        case .guardianOwnOrRoot: "a guardian their own, root anyone's"
        case .guardianNotRoot: "a guardian of someone, never root"
        case .root: "root"
        }
    }

    /// Whether a caller of `uid` gets past the table (the rest is the handler's).
    func admits(uid: UInt32) -> Bool {
        self != .root || uid == 0
    }
}

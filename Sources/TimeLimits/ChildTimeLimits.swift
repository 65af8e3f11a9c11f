/// The limits in force for one child, as the Guard keeps them: what the
/// apps approved for the child set, combined, and the more time guardians
/// gave. The policy (which records settings and decisions) hands these to
/// the time keeper (which counts session time, writes the login-limits file
/// and locks or ends sessions); neither reaches into the other.
public struct ChildTimeLimits: Hashable, Sendable {
    public var uid: UInt32
    public var user: String
    /// The apps' limits combined (``TimeLimits/combined(_:)``).
    public var limits: TimeLimits
    /// The names of the apps that set them, as the guardian saw them.
    public var appNames: [String]
    /// The local day (`YYYY-MM-DD`) `extraSeconds` is for.
    public var day: String
    /// More session time guardians gave for `day`.
    public var extraSeconds: Int
    /// Until when (Unix seconds) a guardian let the child be logged in
    /// outside the hours; 0 for never.
    public var openUntil: Double

    public init(uid: UInt32, user: String, limits: TimeLimits, appNames: [String], day: String,
                extraSeconds: Int = 0, openUntil: Double = 0) {
        self.uid = uid
        self.user = user
        self.limits = limits
        self.appNames = appNames
        self.day = day
        self.extraSeconds = extraSeconds
        self.openUntil = openUntil
    }
}

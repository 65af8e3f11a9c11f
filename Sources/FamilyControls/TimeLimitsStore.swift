/// The login hours and daily session time an approved app keeps for its
/// child, which the system enforces at every login and during each session
/// (Linux only: in the spirit of ManagedSettings' `ManagedSettingsStore`,
/// which Apple's FamilyControls apps use for their restrictions).
public struct LoginLimits: Sendable, Hashable {
    /// What happens when the child's time is up or their hours end.
    public enum AtEnd: String, Sendable, Hashable {
        /// The screen locks.
        case lock
        /// The sessions end.
        case end
    }

    /// The hours the child may be logged in, in the machine's local time,
    /// as a person writes them: `"Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00"`;
    /// nil for no hours limit.
    public var hours: String?
    /// The session time a day allows (whole seconds, at most a day); nil for no daily limit.
    public var dailyAllowance: Duration?
    public var atEnd: AtEnd

    public init(hours: String? = nil, dailyAllowance: Duration? = nil, atEnd: AtEnd = .lock) {
        self.hours = hours
        self.dailyAllowance = dailyAllowance
        self.atEnd = atEnd
    }
}

/// The limits in force for the app's child, every approved app's together.
public struct LoginLimitsInForce: Sendable, Hashable {
    /// The hours every app allows, as a person writes them; nil for none.
    public var hours: String?
    public var dailyAllowance: Duration?
    public var atEnd: LoginLimits.AtEnd
    /// More time a parent or guardian gave today.
    public var moreTimeToday: Duration
    /// Time left today, when the system counts it; nil otherwise.
    public var timeLeft: Duration?
    /// The names of the apps that set them.
    public var setBy: [String]

    package init(hours: String?, dailyAllowance: Duration?, atEnd: LoginLimits.AtEnd, moreTimeToday: Duration,
                 timeLeft: Duration?, setBy: [String]) {
        self.hours = hours
        self.dailyAllowance = dailyAllowance
        self.atEnd = atEnd
        self.moreTimeToday = moreTimeToday
        self.timeLeft = timeLeft
        self.setBy = setBy
    }
}

/// How ``TimeLimitsStore/apply(_:)`` took effect.
public enum LoginLimitsOutcome: Sendable, Hashable {
    /// As strict as the limits in force or stricter: at once.
    case applied
    /// Looser: a parent or guardian approved them from their own session.
    case approvedByGuardian
}

/// Where an approved app sets its child's login limits and asks for more
/// time (Linux only). Only an app approved for the calling child, run from
/// its approved folder, may; the system identifies the app from the running
/// program, never from what it says.
public struct TimeLimitsStore: Sendable {
    /// The center whose Guard keeps the limits, and whose
    /// ``AuthorizationCenter/prompter`` is told of a parent's decision.
    public let center: AuthorizationCenter

    /// A store on ``AuthorizationCenter/shared``, the system's Guard.
    public init() {
        center = .shared
    }

    /// A store on `center`'s Guard: an in-memory one's in an app's own tests
    /// (`FamilyControlsTesting`).
    public init(center: AuthorizationCenter) {
        self.center = center
    }

    /// Makes `limits` this app's limits for its child. Limits as strict as
    /// the app's limits in force or stricter take effect at once; looser ones
    /// (more hours, more time, locking instead of ending, a limit lifted) wait
    /// for a parent or guardian, which ``AuthorizationCenter/prompter`` is
    /// told of (a `pending` prompt).
    /// - Throws: ``FamilyControlsError``: `.restricted` for an app not
    ///   approved for a child, `.invalidArgument` for hours that do not read,
    ///   `.authorizationCanceled` when a parent or guardian said no or none
    ///   decided in time, `.unavailable`; ``AuthorizationCenter/lastErrorMessage`` says why.
    public func apply(_ limits: LoginLimits) async throws -> LoginLimitsOutcome {
        let (backend, generation) = center.currentBackend
        return try center.settled(await backend.setTimeLimits(limits, prompter: center.prompter), generation: generation)
    }

    /// Asks a parent or guardian for `minutes` more session time today,
    /// with the child's `reason`; waits until one decides.
    /// - Returns: the time given (a parent or guardian may give another amount).
    public func requestMoreTime(minutes: Int, reason: String? = nil) async throws -> Duration {
        let (backend, generation) = center.currentBackend
        return try center.settled(await backend.requestMoreTime(minutes: minutes, reason: reason, prompter: center.prompter),
                                  generation: generation)
    }

    /// The limits in force for the app's child; nil when there are none.
    public func current() async throws -> LoginLimitsInForce? {
        let (backend, generation) = center.currentBackend
        return try center.settled(await backend.timeLimits(), generation: generation)
    }
}

import GuardProtocol

/// What an ``AuthorizationCenter`` talks to: the Guard over its socket
/// (`GuardBackend`), or the in-memory Guard of `FamilyControlsTesting`.
///
/// The center keeps Apple's rules (when the status is set, when it follows
/// changes, what a revoke resets); a backend only answers.
package protocol AuthorizationBackend: Sendable {
    /// Runs a request to its end: the status it leaves, or why it failed.
    /// `prompter` shows the alert and the authentication sheet.
    func request(_ member: FamilyControlsMember, prompter: any Prompter) async -> Result<AuthorizationStatus, GuardFailure>

    /// Revokes the app's authorization; a child's approval may need a guardian through `prompter`.
    func revoke(prompter: any Prompter) async -> Result<Void, GuardFailure>

    /// Asks to swap in the version the app staged beside its folder (Linux only);
    /// an unsigned one may need a guardian through `prompter`.
    func update(prompter: any Prompter) async -> Result<AppUpdateOutcome, GuardFailure>

    /// What the environment says the process is: the monitor the Guard
    /// started, until ``identifyMonitor()`` confirms it; nil when it says nothing.
    var monitorClaim: MonitorClaim? { get }

    /// The monitor the Guard says the calling process is (`IdentifyMonitor`), or none.
    func identifyMonitor() async -> Result<IdentifiedMonitor?, GuardFailure>

    /// Follows the app's status: `update` hears every change, on any thread,
    /// until the returned value is stopped.
    func follow(_ update: @escaping @Sendable (AuthorizationStatus) -> Void) -> any StatusFollowing

    /// Makes `limits` the app's login limits for its child (Linux only);
    /// looser ones wait for a parent or guardian, which `prompter` is told of.
    func setTimeLimits(_ limits: LoginLimits, prompter: any Prompter) async -> Result<LoginLimitsOutcome, GuardFailure>

    /// Asks a parent or guardian for more session time today (Linux only): the time given.
    func requestMoreTime(minutes: Int, reason: String?, prompter: any Prompter) async -> Result<Duration, GuardFailure>

    /// The login limits in force for the app's child (Linux only), nil for none.
    func timeLimits() async -> Result<LoginLimitsInForce?, GuardFailure>
}

/// A running ``AuthorizationBackend/follow(_:)``.
package protocol StatusFollowing: Sendable {
    /// Stops the updates; one already on its way may still arrive.
    func stop()
}

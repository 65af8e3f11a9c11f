import GuardProtocol
import Varlink
import VarlinkClientKit

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
    public init() {}

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
        let prompter = AuthorizationCenter.shared.prompter
        let daily = limits.dailyAllowance.map { "\($0.components.seconds)s" }
        let parameters = Guard.SetTimeLimits.Parameters(hours: limits.hours, daily: daily,
                                                        atEnd: limits.atEnd == .end ? .end : .lock)
        let reply = try await Self.run { () throws(GuardFailure) in
            try GuardClient.converse(Guard.SetTimeLimits.self, parameters, prompter: prompter, connected: { _ in })
        }
        return reply.outcome == .approved ? .approvedByGuardian : .applied
    }

    /// Asks a parent or guardian for `minutes` more session time today,
    /// with the child's `reason`; waits until one decides.
    /// - Returns: the time given (a parent or guardian may give another amount).
    public func requestMoreTime(minutes: Int, reason: String? = nil) async throws -> Duration {
        let prompter = AuthorizationCenter.shared.prompter
        let parameters = Guard.RequestMoreTime.Parameters(minutes: Int64(minutes), reason: reason)
        let reply = try await Self.run { () throws(GuardFailure) in
            try GuardClient.converse(Guard.RequestMoreTime.self, parameters, prompter: prompter, connected: { _ in })
        }
        return .seconds(reply.granted ?? 0)
    }

    /// The limits in force for the app's child; nil when there are none.
    public func current() async throws -> LoginLimitsInForce? {
        let reply = try await Self.run { () throws(GuardFailure) in
            let client = try GuardClient.connect()
            defer { client.close() }
            do throws(VarlinkClientError) {
                let parameters = try client.call(Guard.GetTimeLimits.method, parameters: Guard.GetTimeLimits.Parameters().object,
                                                 timeout: .seconds(5))
                do throws(ProtocolDecodingError) {
                    return try Guard.GetTimeLimits.Reply(parameters, at: "", strict: false)
                } catch {
                    throw VarlinkClientError.protocolViolation("the reply to GetTimeLimits is not what the interface says: \(error)")
                }
            } catch {
                throw GuardFailure(error, connecting: false)
            }
        }
        guard let limits = reply.limits else { return nil }
        let daily: Duration? = limits.daily.map { Duration.seconds($0) }
        let left: Duration? = limits.left.map { Duration.seconds($0) }
        let names: [String] = limits.apps.map { $0.name ?? $0.app }
        let atEnd: LoginLimits.AtEnd = limits.atEnd == .end ? .end : .lock
        return LoginLimitsInForce(hours: limits.hours, dailyAllowance: daily, atEnd: atEnd,
                                  moreTimeToday: .seconds(limits.extra), timeLeft: left, setBy: names)
    }

    /// Runs `body` on the library's pool; a failure is recorded for
    /// ``AuthorizationCenter/lastErrorMessage`` and thrown as the public error.
    private static func run<T: Sendable>(_ body: @escaping @Sendable () throws(GuardFailure) -> T) async throws -> T {
        let result = await GuardBackend.blocking { () -> Result<T, GuardFailure> in
            do throws(GuardFailure) { return .success(try body()) } catch { return .failure(error) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let failure):
            AuthorizationCenter.shared.record(failure, generation: AuthorizationCenter.shared.currentBackend.generation)
            throw failure.error
        }
    }
}

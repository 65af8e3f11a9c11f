import GuardProtocol

// The login limits' calls to the Guard (Linux only), for ``TimeLimitsStore``.
extension GuardBackend {
    package func setTimeLimits(_ limits: LoginLimits, prompter: any Prompter) async -> Result<LoginLimitsOutcome, GuardFailure> {
        let daily = limits.dailyAllowance.map { "\($0.components.seconds)s" }
        let parameters = Guard.SetTimeLimits.Parameters(hours: limits.hours, daily: daily,
                                                        atEnd: limits.atEnd == .end ? .end : .lock)
        return await Self.blocking { () throws(GuardFailure) in
            let reply = try GuardClient.converse(Guard.SetTimeLimits.self, parameters, prompter: prompter, connected: { _ in })
            return reply.outcome == .approved ? .approvedByGuardian : .applied
        }
    }

    package func requestMoreTime(minutes: Int, reason: String?, prompter: any Prompter) async -> Result<Duration, GuardFailure> {
        let parameters = Guard.RequestMoreTime.Parameters(minutes: Int64(minutes), reason: reason)
        return await Self.blocking { () throws(GuardFailure) -> Duration in
            let reply = try GuardClient.converse(Guard.RequestMoreTime.self, parameters, prompter: prompter, connected: { _ in })
            return .seconds(reply.granted ?? 0)
        }
    }

    package func timeLimits() async -> Result<LoginLimitsInForce?, GuardFailure> {
        await Self.blocking { () throws(GuardFailure) in try Self.readTimeLimits() }
    }

    private static func readTimeLimits() throws(GuardFailure) -> LoginLimitsInForce? {
        let reply = try GuardClient.call(Guard.GetTimeLimits.self, Guard.GetTimeLimits.Parameters())
        guard let limits = reply.limits else { return nil }
        return LoginLimitsInForce(hours: limits.hours, dailyAllowance: limits.daily.map { .seconds($0) },
                                  atEnd: limits.atEnd == .end ? .end : .lock, moreTimeToday: .seconds(limits.extra),
                                  timeLeft: limits.left.map { .seconds($0) }, setBy: limits.apps.map { $0.name ?? $0.app })
    }
}

import FamilyControls
import Foundation
import GuardProtocol
import TimeLimits

// The login limits (Linux only), by the Guard's rules: only an app approved
// for a child may set them or ask for more time; as strict as before or
// stricter takes effect at once (``TimeLimits/isAtLeastAsStrict(as:)``,
// the Guard's own test); anything looser, and more time, is a parent's or
// guardian's decision, which the test gives at the sheet.
extension InMemoryGuardEngine {
    /// The most minutes one request for more time may ask (the Guard's bound).
    static let mostMoreTimeMinutes = 1440

    func setTimeLimits(_ limits: LoginLimits, prompter: any Prompter) async -> Result<LoginLimitsOutcome, GuardFailure> {
        let asked: TimeLimits
        do throws(GuardFailure) {
            try checkApproved(doing: "set time limits")
            asked = try Self.parse(limits)
        } catch {
            return .failure(error)
        }
        let current = state.withLock { $0.timeLimits }
        if asked.isAtLeastAsStrict(as: current) {
            keep(asked)
            return .success(.applied)
        }
        return await decided(.timeLimits(limits), denied: "the time limits in force stay").map { _ in
            keep(asked)
            return .approvedByGuardian
        }
    }

    func requestMoreTime(minutes: Int, reason: String?, prompter: any Prompter) async -> Result<Duration, GuardFailure> {
        do throws(GuardFailure) {
            try checkApproved(doing: "ask for more time")
            guard (1...Self.mostMoreTimeMinutes).contains(minutes) else {
                throw GuardFailure(.familyControls(.invalidArgument),
                                   "minutes must be a whole number from 1 to \(Self.mostMoreTimeMinutes), not \(minutes)")
            }
            guard state.withLock({ $0.timeLimits != nil }) else {
                throw GuardFailure(.familyControls(.invalidArgument),
                                   "\(Self.app.user) has no time limits in force: there is no more time to ask for")
            }
        } catch {
            return .failure(error)
        }
        return await decided(.moreTime(minutes: minutes, reason: reason), denied: "no more time was given").map { _ in
            state.withLock { $0.moreTime += minutes * 60 }
            return .seconds(minutes * 60)
        }
    }

    func timeLimits() async -> Result<LoginLimitsInForce?, GuardFailure> {
        do throws(GuardFailure) {
            try checkApproved(doing: "read time limits")
        } catch {
            return .failure(error)
        }
        return .success(state.withLock { state in
            guard let limits = state.timeLimits else { return nil }
            let left = limits.daily.map { Duration.seconds(max(0, $0.seconds + state.moreTime - state.timeUsed)) }
            return LoginLimitsInForce(hours: limits.hours?.description, dailyAllowance: limits.daily.map { .seconds($0.seconds) },
                                      atEnd: limits.atEnd == .end ? .end : .lock, moreTimeToday: .seconds(state.moreTime),
                                      timeLeft: left, setBy: [Self.app.displayName])
        })
    }

    // MARK: The test's side

    /// The limits the app keeps for its child, as the Guard holds them.
    var keptTimeLimits: LoginLimits? {
        state.withLock { state in
            state.timeLimits.map { limits in
                LoginLimits(hours: limits.hours?.description, dailyAllowance: limits.daily.map { .seconds($0.seconds) },
                            atEnd: limits.atEnd == .end ? .end : .lock)
            }
        }
    }

    var timeUsedToday: Duration {
        get { .seconds(state.withLock { $0.timeUsed }) }
        set { state.withLock { $0.timeUsed = max(0, Int(newValue.components.seconds)) } }
    }

    // MARK: Internals

    /// Refuses, as the Guard does, an app not approved for its user as a child.
    private func checkApproved(doing what: String) throws(GuardFailure) {
        let (running, approved) = state.withLock { ($0.isRunning, $0.status == .approved && $0.approvedMember == .child) }
        guard running else { throw Self.unavailable }
        guard approved else {
            throw GuardFailure(.restricted, "only an app approved for \(Self.app.user) as a child, run from its approved "
                + "folder, may \(what)")
        }
    }

    /// The limits as the Guard reads them from the wire, with its errors.
    private static func parse(_ limits: LoginLimits) throws(GuardFailure) -> TimeLimits {
        do throws(TimeLimitsError) {
            return TimeLimits(hours: try limits.hours.map { text throws(TimeLimitsError) in try LoginHours(parsing: text) },
                              daily: try limits.dailyAllowance.map { allowance throws(TimeLimitsError) in
                                  try SessionDuration(parsing: "\(allowance.components.seconds)s")
                              },
                              atEnd: limits.atEnd == .end ? .end : .lock)
        } catch {
            throw GuardFailure(.familyControls(.invalidArgument), error.description)
        }
    }

    private func keep(_ limits: TimeLimits) {
        state.withLock { $0.timeLimits = limits.limitsAnything ? limits : nil }
    }

    /// A parent's or guardian's decision on `purpose`: the test's answer,
    /// waited for on a thread of its own, as a request's is.
    private func decided(_ purpose: Sheet.Purpose, denied: String) async -> Result<Void, GuardFailure> {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                switch waitForAnswer(for: purpose) {
                case .approve:
                    continuation.resume(returning: .success(()))
                case .deny:
                    continuation.resume(returning: .failure(GuardFailure(.authorizationCanceled,
                                                                         "\(denied) (decided by \(Self.guardian))")))
                case .cancel:
                    continuation.resume(returning: .failure(GuardFailure(.authorizationCanceled,
                                                                         "the request was canceled: no one decided")))
                case .fail(let error):
                    continuation.resume(returning: .failure(GuardFailure(error, error.errorDescription ?? error.caseName)))
                }
            }
        }
    }
}

import Synchronization
import SystemKit

/// Failed authentications in a row for each requesting user, counted across
/// requests and apps.
///
/// A child can start request after request, from app after app (any folder
/// under their own app root can be an app), each allowing `MaxAttempts`
/// passwords. Once a user has failed that many times in a row, each further
/// attempt waits out `FailureDelay` after the last failure, twice as long
/// with every further failure (up to ``maximumDoublings`` times), so guessing
/// a guardian's password gets slower and slower. A correct password clears
/// the count. The counts live in memory: only root can restart the Guard.
package final class AuthenticationBackoff: Sendable {
    /// How many times the delay doubles at most: 30 s becomes at most 16 min.
    package static let maximumDoublings = 5

    private struct Record {
        var failures: Int
        var lastFailure: MonotonicInstant
    }

    private let records = Mutex<[String: Record]>([:])

    package init() {}

    /// How long `user` must still wait before their next attempt; nil when
    /// they may try now.
    /// - Parameters:
    ///   - freeFailures: failures in a row allowed with no delay (`MaxAttempts`).
    ///   - delay: the first delay (`FailureDelay`); zero turns the backoff off.
    package func remainingWait(for user: String, freeFailures: Int, delay: Duration,
                       now: MonotonicInstant = .now) -> Duration? {
        guard delay > .zero, let record = records.withLock({ $0[user] }),
              record.failures >= freeFailures else { return nil }
        let doublings = min(record.failures - freeFailures, Self.maximumDoublings)
        let required = delay * (1 << doublings)
        let remaining = record.lastFailure.advanced(by: required) - now
        return remaining > .zero ? remaining : nil
    }

    /// Counts a failed authentication of (or on behalf of) `user`.
    /// - Returns: how many failures in a row `user` now has.
    @discardableResult
    package func recordFailure(of user: String, now: MonotonicInstant = .now) -> Int {
        records.withLock { records in
            var record = records[user] ?? Record(failures: 0, lastFailure: now)
            record.failures += 1
            record.lastFailure = now
            records[user] = record
            return record.failures
        }
    }

    /// A correct password: `user` starts again from no failures.
    package func recordSuccess(of user: String) {
        _ = records.withLock { $0.removeValue(forKey: user) }
    }

    /// Failures in a row recorded for `user`.
    package func failures(of user: String) -> Int {
        records.withLock { $0[user]?.failures } ?? 0
    }
}

extension Duration {
    /// Whole seconds, rounded up, as a person reads a wait: "31 seconds".
    package var spokenSeconds: String {
        let (seconds, attoseconds) = components
        let whole = seconds + (attoseconds > 0 ? 1 : 0)
        return whole == 1 ? "1 second" : "\(whole) seconds"
    }
}

import Synchronization
import SystemKit
import GuardIdentity

/// How many requests one user may start: a burst of ``burst``, then one
/// every ``interval``, whichever app asks.
///
/// A child can make an app of any folder under its app root, and every
/// request (even one answered "Don't Allow") costs the Guard an audit row and
/// a guardian's attention; without a bound, a script could add thousands an
/// hour. The counts live in memory: only root can restart the Guard.
package final class RequestQuota: Sendable {
    /// Requests a user may start at once.
    package let burst: Int
    /// How long it takes to earn one more.
    package let interval: Duration

    private struct Bucket {
        var tokens: Double
        var updated: MonotonicInstant
        /// Whether the refusal since the bucket ran empty was already reported.
        var reported: Bool
    }
    private let buckets = Mutex<[String: Bucket]>([:])

    package init(burst: Int = GuardLimits().requestBurst, interval: Duration = GuardLimits().requestInterval) {
        self.burst = burst
        self.interval = interval
    }

    /// Takes one request for `user`.
    /// - Returns: nil when `user` may start it; otherwise how long until they
    ///   may, and whether this is the first refusal since they ran out (the
    ///   one worth an audit row).
    package func take(for user: String, now: MonotonicInstant = .now) -> (wait: Duration, first: Bool)? {
        buckets.withLock { buckets in
            var bucket = buckets[user] ?? Bucket(tokens: Double(burst), updated: now, reported: false)
            let earned = (now - bucket.updated) / interval
            bucket.tokens = min(Double(burst), bucket.tokens + earned)
            bucket.updated = now
            defer { buckets[user] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                bucket.reported = false
                return nil
            }
            let wait = interval * (1 - bucket.tokens)
            let first = !bucket.reported
            bucket.reported = true
            return (wait, first)
        }
    }
}

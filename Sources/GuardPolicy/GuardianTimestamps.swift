import Synchronization
import SystemKit
import GuardIdentity

/// When each guardian last authenticated, per terminal session, as sudo's
/// timestamps: within `GuardianTimeout` of it, later verbs from the same
/// session are not asked again. Kept in memory only, so a restart of the
/// Guard asks everyone again.
final class GuardianTimestamps: Sendable {
    /// Sessions remembered at once; beyond it the oldest is forgotten (its
    /// guardian is simply asked again): ``GuardLimits/guardianSessions``.
    let capacity: Int

    init(capacity: Int = GuardLimits().guardianSessions) {
        self.capacity = capacity
    }

    private let authenticated = Mutex<[TerminalSession: MonotonicInstant]>([:])

    /// Whether `session` authenticated less than `timeout` ago; never for a zero timeout.
    func covers(_ session: TerminalSession, within timeout: Duration) -> Bool {
        guard timeout > .zero else { return false }
        return authenticated.withLock { times in
            guard let at = times[session] else { return false }
            if MonotonicInstant.now < at.advanced(by: timeout) { return true }
            times[session] = nil
            return false
        }
    }

    /// Records that `session`'s guardian authenticated now.
    func record(_ session: TerminalSession) {
        authenticated.withLock { times in
            times[session] = .now
            if times.count > capacity, let oldest = times.min(by: { $0.value < $1.value })?.key {
                times[oldest] = nil
            }
        }
    }
}

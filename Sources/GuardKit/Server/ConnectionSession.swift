import Dispatch
import Synchronization
import Varlink

/// What the Guard keeps per connection: who the caller is (worked out once),
/// the request in progress, and a serial queue that keeps slow calls in order.
final class ConnectionSession: Sendable {
    private struct State {
        var caller: Result<Caller, GuardFailure>?
        var channel: VarlinkRequestChannel?
        var pending = 0
    }

    private let state = Mutex(State())
    /// Slow calls (identification, admin work, revoke) run here, one at a time,
    /// so their replies leave in the order the calls came.
    let queue: DispatchQueue

    init(id: UInt64) {
        queue = DispatchQueue(label: "guard.connection.\(id)")
    }

    /// The identified caller, when already known.
    var cachedCaller: Result<Caller, GuardFailure>? { state.withLock { $0.caller } }

    func remember(_ caller: Result<Caller, GuardFailure>) { state.withLock { $0.caller = caller } }

    /// Whether slow calls are queued or running (fast calls must then queue behind them).
    var isIdle: Bool { state.withLock { $0.pending == 0 } }

    /// Runs `body` on the session's queue, in order with other slow calls.
    func enqueue(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.pending += 1 }
        queue.async {
            body()
            self.state.withLock { $0.pending -= 1 }
        }
    }

    /// Starts a request; nil when one is already in progress on this connection.
    func beginRequest(_ channel: VarlinkRequestChannel) -> Bool {
        state.withLock { state in
            guard state.channel == nil else { return false }
            state.channel = channel
            return true
        }
    }

    func endRequest() { state.withLock { $0.channel = nil } }

    var activeChannel: VarlinkRequestChannel? { state.withLock { $0.channel } }

    /// The session of `connection`, made on first use.
    static func of(_ connection: VarlinkConnection) -> ConnectionSession {
        connection.withAttachment { slot in
            if let session = slot as? ConnectionSession { return session }
            let session = ConnectionSession(id: connection.id)
            slot = session
            return session
        }
    }
}

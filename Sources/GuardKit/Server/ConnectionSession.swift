import GuardProtocol
import Synchronization
import SystemKit
import Varlink
import VarlinkServerKit
import GuardPolicy

/// What the Guard keeps per connection: who the caller is (worked out once),
/// the request in progress, the status subscriptions, and a serial lane on the
/// Guard's pool that keeps slow calls in order.
///
/// The session registers one close handler with its connection and ends
/// whatever is live when it runs, so no call leaves anything behind that
/// waits for the connection to close.
final class ConnectionSession: Sendable {
    private struct State {
        var caller: Result<Caller, GuardFailure>?
        var channel: VarlinkRequestChannel?
        var pending = 0
        /// How to end each subscription, run when the connection closes.
        var subscriptions: [@Sendable () -> Void] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// Slow calls (identification, admin work, revoke) run here, one at a time,
    /// so their replies leave in the order the calls came.
    private let lane: SerialLane

    init(on executor: BlockingExecutor) {
        lane = SerialLane(on: executor)
    }

    /// The identified caller, when already known.
    var cachedCaller: Result<Caller, GuardFailure>? { state.withLock { $0.caller } }

    func remember(_ caller: Result<Caller, GuardFailure>) { state.withLock { $0.caller = caller } }

    /// Whether slow calls are queued or running (fast calls must then queue behind them).
    var isIdle: Bool { state.withLock { $0.pending == 0 } }

    /// Runs `body` on the session's lane, in order with other slow calls. The
    /// call stays pending on `connection` until `body` returns, which bounds
    /// what one connection can queue (the server stops reading it at the limit).
    /// When the Guard's pool is saturated, `body` does not run and the call
    /// is refused with a "busy, try again" error.
    func enqueue(on connection: VarlinkConnection, _ body: @escaping @Sendable () -> Void) {
        let call = connection.beginPendingCall()
        state.withLock { $0.pending += 1 }
        do throws(BlockingExecutor.Saturated) {
            try lane.submit {
                body()
                self.state.withLock { $0.pending -= 1 }
                call.finish()
            }
        } catch {
            state.withLock { $0.pending -= 1 }
            GuardService.fail(connection, .busy)
            call.finish()
        }
    }

    /// Starts a request; false when one is already in progress on this
    /// connection, or the connection has closed.
    func beginRequest(_ channel: VarlinkRequestChannel) -> Bool {
        state.withLock { state in
            guard state.channel == nil, !state.closed else { return false }
            state.channel = channel
            return true
        }
    }

    func endRequest() { state.withLock { $0.channel = nil } }

    var activeChannel: VarlinkRequestChannel? { state.withLock { $0.channel } }

    /// Subscriptions held now.
    var subscriptionCount: Int { state.withLock { $0.subscriptions.count } }

    /// Keeps `cancel`, which ends a subscription, to run when the connection
    /// closes; runs it at once when the connection has closed already.
    /// - Returns: whether the subscription is kept.
    func keepSubscription(_ cancel: @escaping @Sendable () -> Void) -> Bool {
        let kept = state.withLock { state in
            guard !state.closed else { return false }
            state.subscriptions.append(cancel)
            return true
        }
        if !kept { cancel() }
        return kept
    }

    /// The connection closed: wakes the request waiting for an answer and ends
    /// every subscription.
    private func connectionClosed() {
        let (channel, subscriptions) = state.withLock { state in
            state.closed = true
            defer { state.subscriptions = [] }
            return (state.channel, state.subscriptions)
        }
        channel?.close()
        for cancel in subscriptions { cancel() }
    }

    /// The session of `connection`, made on first use.
    static func of(_ connection: VarlinkConnection, on executor: BlockingExecutor) -> ConnectionSession {
        let (session, made) = connection.withAttachment { slot -> (ConnectionSession, Bool) in
            if let session = slot as? ConnectionSession { return (session, false) }
            let session = ConnectionSession(on: executor)
            slot = session
            return (session, true)
        }
        if made { connection.onClose { session.connectionClosed() } }
        return session
    }
}

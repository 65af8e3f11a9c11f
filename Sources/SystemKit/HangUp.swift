import Synchronization

/// Tells threads blocked on a client's behalf that the client went away.
///
/// Set once, for good. A wait that watches it (``watch(_:)``) is woken by
/// the signal it waits on, so a hang-up ends the wait at once rather than
/// at the next look.
package final class HangUp: Sendable {
    private struct State {
        var isSet = false
        var watchers: [Int: ConditionSignal] = [:]
        var next = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the client went away.
    package var isSet: Bool { state.withLock { $0.isSet } }

    /// Marks the client gone and wakes every wait watching.
    package func set() {
        let watchers = state.withLock { state -> [ConditionSignal] in
            guard !state.isSet else { return [] }
            state.isSet = true
            return Array(state.watchers.values)
        }
        for signal in watchers { signal.broadcast() }
    }

    /// Runs `body` with `signal` woken by a hang-up meanwhile. `body` waits
    /// on `signal` and checks ``isSet`` in its predicate: since a broadcast
    /// takes the signal's lock, a hang-up between that check and the wait
    /// still wakes it.
    package func watch<R, E: Error>(_ signal: ConditionSignal, _ body: () throws(E) -> R) throws(E) -> R {
        let token = state.withLock { state in
            state.next += 1
            state.watchers[state.next] = signal
            return state.next
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: token) } }
        return try body()
    }
}

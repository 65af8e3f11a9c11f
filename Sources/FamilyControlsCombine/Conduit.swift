/// One subscriber's subscription to a subject (a `@Published` property, an
/// `objectWillChange`): it counts the subscriber's demand and, for a property,
/// holds the latest value back until there is demand, as Combine's
/// `CurrentValueSubject` does.
class Conduit<Value>: Subscription, @unchecked Sendable {
    /// Hands `value` to the subscriber if it wants one.
    func offer(_ value: Value) {
        preconditionFailure("Conduit.offer(_:) must be overridden")
    }

    func request(_ demand: Subscribers.Demand) {
        preconditionFailure("Conduit.request(_:) must be overridden")
    }

    func cancel() {
        preconditionFailure("Conduit.cancel() must be overridden")
    }
}

/// The ``Conduit`` of one subscriber type.
final class SubscriberConduit<Downstream: Subscriber>: Conduit<Downstream.Input>, @unchecked Sendable
where Downstream.Failure == Never {
    typealias Value = Downstream.Input

    private struct State {
        var downstream: Downstream?
        var demand = Subscribers.Demand.none
        var held: Value?
    }
    private let state: LockedState<State>
    private let keepsLatest: Bool
    private let detach: @Sendable () -> Void

    /// - Parameters:
    ///   - held: a value to deliver on the first demand (a property's current value).
    ///   - keepsLatest: whether a value offered without demand waits for demand
    ///     (a property) or is dropped (`objectWillChange`).
    ///   - detach: removes the conduit from its subject; called once, on cancel.
    init(_ downstream: Downstream, holding held: Value?, keepsLatest: Bool, detach: @escaping @Sendable () -> Void) {
        state = LockedState(State(downstream: downstream, held: held))
        self.keepsLatest = keepsLatest
        self.detach = detach
    }

    override func offer(_ value: Value) {
        let downstream: Downstream? = state.withLock { state in
            guard let downstream = state.downstream else { return nil }
            guard state.demand > .none else {
                if keepsLatest { state.held = value }
                return nil
            }
            state.demand -= 1
            return downstream
        }
        if let downstream { deliver(value, to: downstream) }
    }

    override func request(_ demand: Subscribers.Demand) {
        precondition(demand > .none, "a subscriber must request at least one value")
        let delivery: (Downstream, Value)? = state.withLock { state in
            state.demand += demand
            guard let downstream = state.downstream, let held = state.held else { return nil }
            state.held = nil
            state.demand -= 1
            return (downstream, held)
        }
        if let (downstream, value) = delivery { deliver(value, to: downstream) }
    }

    override func cancel() {
        let wasAttached = state.withLock { state in
            defer {
                state.downstream = nil
                state.held = nil
            }
            return state.downstream != nil
        }
        if wasAttached { detach() }
    }

    private func deliver(_ value: Value, to downstream: Downstream) {
        let more = downstream.receive(value)
        if more > .none { request(more) }
    }
}

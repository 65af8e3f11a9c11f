/// The value of one `@Published` property and its subscribers, shared by the
/// property and its `$` publisher.
final class PublishedSubject<Value>: @unchecked Sendable {
    private struct State {
        var value: Value
        var conduits: [Int: Conduit<Value>] = [:]
        var nextID = 0
        var willChange: ObservableObjectPublisher?
        weak var owner: AnyObject?
        var assignments: [AnyCancellable] = []
    }
    private let state: LockedState<State>

    init(_ value: Value) {
        state = LockedState(State(value: value))
    }

    var value: Value {
        state.withLock { $0.value }
    }

    /// Stores `newValue`, then hands it to every subscriber in the order they subscribed.
    ///
    /// Combine hands the value over before storing it; storing first means a
    /// subscriber that reads the property, as Apple's `sink()` example does,
    /// reads the new value.
    func set(_ newValue: Value) {
        let conduits = state.withLock { state in
            state.value = newValue
            return state.conduits.sorted { $0.key < $1.key }.map(\.value)
        }
        for conduit in conduits { conduit.offer(newValue) }
    }

    /// Attaches `subscriber`; it receives the current value on its first demand.
    func attach<S: Subscriber>(_ subscriber: S) where S.Input == Value, S.Failure == Never {
        let conduit: SubscriberConduit<S> = state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            let conduit = SubscriberConduit(subscriber, holding: state.value, keepsLatest: true) { [weak self] in
                self?.detach(id)
            }
            state.conduits[id] = conduit
            return conduit
        }
        subscriber.receive(subscription: conduit)
    }

    private func detach(_ id: Int) {
        _ = state.withLock { $0.conduits.removeValue(forKey: id) }
    }

    /// Remembers the object the property belongs to.
    func noteOwner(_ object: AnyObject) {
        state.withLock { state in
            if state.owner == nil { state.owner = object }
        }
    }

    /// The `objectWillChange` of the property's owner (`object`, or the one
    /// noted), when it uses the default one and someone has asked for it.
    func willChange(of object: AnyObject?) -> ObservableObjectPublisher? {
        let (known, owner) = state.withLock { ($0.willChange, object ?? $0.owner) }
        if let known { return known }
        guard let owner, let found = ObjectWillChangeRegistry.existingPublisher(for: owner) else { return nil }
        state.withLock { $0.willChange = found }
        return found
    }

    /// Sets the property to every value of `publisher` (`assign(to: &$property)`),
    /// for as long as the property exists.
    func assign<P: Publisher>(from publisher: P) where P.Output == Value, P.Failure == Never {
        let sink = Subscribers.Sink<Value, Never>(receiveCompletion: { _ in }, receiveValue: { [weak self] value in
            guard let self else { return }
            self.willChange(of: nil)?.send()
            self.set(value)
        })
        state.withLock { $0.assignments.append(AnyCancellable(sink)) }
        publisher.subscribe(sink)
    }
}

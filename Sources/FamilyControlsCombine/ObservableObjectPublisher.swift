/// Tells subscribers that an object is about to change: Combine's
/// `ObservableObjectPublisher`, the default `objectWillChange`.
///
/// A value sent while a subscriber has no demand is dropped for it.
public final class ObservableObjectPublisher: Publisher, Sendable {
    public typealias Output = Void
    public typealias Failure = Never

    private struct State {
        var conduits: [Int: Conduit<Void>] = [:]
        var nextID = 0
    }
    private let state = LockedState(State())

    public init() {}

    /// Tells every subscriber, in the order they subscribed.
    public func send() {
        let conduits = state.withLock { $0.conduits.sorted { $0.key < $1.key }.map(\.value) }
        for conduit in conduits { conduit.offer(()) }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Void, S.Failure == Never {
        let conduit: SubscriberConduit<S> = state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            let conduit = SubscriberConduit(subscriber, holding: nil, keepsLatest: false) { [weak self] in
                _ = self?.state.withLock { $0.conduits.removeValue(forKey: id) }
            }
            state.conduits[id] = conduit
            return conduit
        }
        subscriber.receive(subscription: conduit)
    }
}

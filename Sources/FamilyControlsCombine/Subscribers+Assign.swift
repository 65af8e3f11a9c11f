extension Subscribers {
    /// Writes every value to a property of an object: what `assign(to:on:)`
    /// attaches, Combine's `Subscribers.Assign`. Like Combine's, it holds the
    /// object strongly until cancelled or finished.
    public final class Assign<Root, Input>: Subscriber, Cancellable, @unchecked Sendable {
        public typealias Failure = Never

        /// The property written.
        public let keyPath: ReferenceWritableKeyPath<Root, Input>

        private struct State {
            var object: Root?
            var subscription: (any Subscription)?
        }
        private let state: LockedState<State>

        /// The object written to, until cancelled or finished.
        public var object: Root? {
            state.withLock { $0.object }
        }

        public init(object: Root, keyPath: ReferenceWritableKeyPath<Root, Input>) {
            self.keyPath = keyPath
            state = LockedState(State(object: object))
        }

        public func receive(subscription: any Subscription) {
            let accepted = state.withLock { state in
                guard state.object != nil, state.subscription == nil else { return false }
                state.subscription = subscription
                return true
            }
            if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            if let object = state.withLock({ $0.object }) {
                object[keyPath: keyPath] = input
            }
            return .none
        }

        public func receive(completion: Subscribers.Completion<Never>) {
            state.withLock { state in
                state.object = nil
                state.subscription = nil
            }
        }

        public func cancel() {
            let subscription: (any Subscription)? = state.withLock { state in
                defer {
                    state.object = nil
                    state.subscription = nil
                }
                return state.subscription
            }
            subscription?.cancel()
        }
    }
}

extension Publisher where Failure == Never {
    /// Writes every value to `object[keyPath:]` until the returned value is
    /// cancelled or released; `object` is held strongly meanwhile.
    public func assign<Root>(to keyPath: ReferenceWritableKeyPath<Root, Output>, on object: Root) -> AnyCancellable {
        let assign = Subscribers.Assign(object: object, keyPath: keyPath)
        subscribe(assign)
        return AnyCancellable(assign)
    }

    /// Sets a `@Published` property to every value, for as long as the property
    /// exists: `publisher.assign(to: &$property)`. The owner's default
    /// `objectWillChange` fires before each value is stored.
    public func assign(to published: inout Published<Output>.Publisher) {
        published.subject.assign(from: self)
    }
}

extension Subscribers {
    /// Demands every value and hands each to a closure: what `sink` attaches,
    /// Combine's `Subscribers.Sink`.
    ///
    /// The closures run on the thread that publishes: the main thread for
    /// `authorizationStatus`, or the scheduler named with `receive(on:)`.
    public final class Sink<Input, Failure: Error>: Subscriber, Cancellable, @unchecked Sendable {
        private enum Link {
            case awaiting
            case subscribed(any Subscription)
            case ended
        }
        /// The closures are let go of once the sink has ended, as Combine's
        /// are: a closure that holds what holds the sink's cancellable (an
        /// object that keeps its own subscription) would otherwise keep both
        /// alive after `cancel()`.
        private struct State {
            var link = Link.awaiting
            var receiveValue: ((Input) -> Void)?
            var receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)?
        }
        private let state: LockedState<State>

        /// Called with every value; does nothing once the sink has ended.
        public var receiveValue: (Input) -> Void {
            state.withLock { $0.receiveValue } ?? { _ in }
        }
        /// Called once with the completion; does nothing once the sink has ended.
        public var receiveCompletion: (Subscribers.Completion<Failure>) -> Void {
            state.withLock { $0.receiveCompletion } ?? { _ in }
        }

        public init(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
                    receiveValue: @escaping (Input) -> Void) {
            state = LockedState(State(receiveValue: receiveValue, receiveCompletion: receiveCompletion))
        }

        public func receive(subscription: any Subscription) {
            let accepted = state.withLock { state in
                guard case .awaiting = state.link else { return false }
                state.link = .subscribed(subscription)
                return true
            }
            if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            state.withLock { $0.receiveValue }?(input)
            return .none
        }

        public func receive(completion: Subscribers.Completion<Failure>) {
            let closures = state.withLock { Self.end(&$0) }
            closures.completion?(completion)
        }

        public func cancel() {
            let (subscription, closures) = state.withLock { state in
                var subscription: (any Subscription)?
                if case .subscribed(let subscribed) = state.link { subscription = subscribed }
                return (subscription, Self.end(&state))
            }
            subscription?.cancel()
            // Let go of here, outside the lock: what they hold may go with them.
            withExtendedLifetime(closures) {}
        }

        private typealias Closures = (completion: ((Subscribers.Completion<Failure>) -> Void)?, value: ((Input) -> Void)?)

        /// Marks the sink ended and takes its closures out (none when it had
        /// ended already), for the caller to call or let go of outside the lock.
        private static func end(_ state: inout State) -> Closures {
            defer {
                state.link = .ended
                state.receiveValue = nil
                state.receiveCompletion = nil
            }
            return (state.receiveCompletion, state.receiveValue)
        }
    }
}

extension Publisher {
    /// Attaches a subscriber that calls `receiveValue` with every value and
    /// `receiveCompletion` at the end, until the returned value is cancelled or released.
    public func sink(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
                     receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        let sink = Subscribers.Sink<Output, Failure>(receiveCompletion: receiveCompletion, receiveValue: receiveValue)
        subscribe(sink)
        return AnyCancellable(sink)
    }
}

extension Publisher where Failure == Never {
    /// Attaches a subscriber that calls `receiveValue` with every value, until
    /// the returned value is cancelled or released.
    public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
    }
}

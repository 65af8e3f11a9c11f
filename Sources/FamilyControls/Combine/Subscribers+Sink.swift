extension Subscribers {
    /// Demands every value and hands each to a closure: what `sink` attaches,
    /// Combine's `Subscribers.Sink`.
    ///
    /// The closures run on the thread that publishes: the main thread for
    /// `authorizationStatus`, or the scheduler named with `receive(on:)`.
    public final class Sink<Input, Failure: Error>: Subscriber, Cancellable, @unchecked Sendable {
        /// Called with every value.
        public let receiveValue: (Input) -> Void
        /// Called once with the completion.
        public let receiveCompletion: (Subscribers.Completion<Failure>) -> Void

        private enum Link {
            case awaiting
            case subscribed(any Subscription)
            case ended
        }
        private let link = LockedState(Link.awaiting)

        public init(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
                    receiveValue: @escaping (Input) -> Void) {
            self.receiveCompletion = receiveCompletion
            self.receiveValue = receiveValue
        }

        public func receive(subscription: any Subscription) {
            let accepted = link.withLock { link in
                guard case .awaiting = link else { return false }
                link = .subscribed(subscription)
                return true
            }
            if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            let ended = link.withLock { link in
                if case .ended = link { return true }
                return false
            }
            if !ended { receiveValue(input) }
            return .none
        }

        public func receive(completion: Subscribers.Completion<Failure>) {
            let wasEnded = link.withLock { link in
                defer { link = .ended }
                if case .ended = link { return true }
                return false
            }
            if !wasEnded { receiveCompletion(completion) }
        }

        public func cancel() {
            let subscription: (any Subscription)? = link.withLock { link in
                defer { link = .ended }
                if case .subscribed(let subscription) = link { return subscription }
                return nil
            }
            subscription?.cancel()
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

extension Publishers {
    /// Skips a value equal to the one before it: what `removeDuplicates()`
    /// returns, Combine's `Publishers.RemoveDuplicates`.
    public struct RemoveDuplicates<Upstream: Publisher>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The publisher whose repeated values are skipped.
        public let upstream: Upstream
        /// Whether the second value repeats the first.
        public let predicate: (Output, Output) -> Bool

        public init(upstream: Upstream, predicate: @escaping (Output, Output) -> Bool) {
            self.upstream = upstream
            self.predicate = predicate
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            upstream.subscribe(RemoveDuplicatesSubscriber(downstream: subscriber, predicate: predicate))
        }
    }
}

extension Publisher where Output: Equatable {
    /// Skips a value equal to the one delivered before it.
    public func removeDuplicates() -> Publishers.RemoveDuplicates<Self> {
        Publishers.RemoveDuplicates(upstream: self, predicate: ==)
    }
}

extension Publisher {
    /// Skips a value for which `predicate(previous, value)` is true.
    public func removeDuplicates(by predicate: @escaping (Output, Output) -> Bool) -> Publishers.RemoveDuplicates<Self> {
        Publishers.RemoveDuplicates(upstream: self, predicate: predicate)
    }
}

/// Remembers the last value delivered; a skipped value is asked for again.
private final class RemoveDuplicatesSubscriber<Downstream: Subscriber>: Subscriber {
    typealias Input = Downstream.Input
    typealias Failure = Downstream.Failure

    private let downstream: Downstream
    private let predicate: (Input, Input) -> Bool
    private let last = LockedState<Input?>(nil)

    init(downstream: Downstream, predicate: @escaping (Input, Input) -> Bool) {
        self.downstream = downstream
        self.predicate = predicate
    }

    func receive(subscription: any Subscription) { downstream.receive(subscription: subscription) }

    func receive(_ input: Input) -> Subscribers.Demand {
        if let previous = last.withLock({ $0 }), predicate(previous, input) { return .max(1) }
        last.withLock { $0 = input }
        return downstream.receive(input)
    }

    func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }
}

extension Publishers {
    /// Skips the first values: what `dropFirst(_:)` returns, Combine's `Publishers.Drop`.
    public struct Drop<Upstream: Publisher>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The publisher whose first values are skipped.
        public let upstream: Upstream
        /// How many values are skipped.
        public let count: Int

        public init(upstream: Upstream, count: Int) {
            precondition(count >= 0, "dropFirst needs a count of zero or more, not \(count)")
            self.upstream = upstream
            self.count = count
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            upstream.subscribe(DropSubscription(downstream: subscriber, count: count))
        }
    }
}

extension Publisher {
    /// Skips the first `count` values; `dropFirst()` on a `@Published` property
    /// skips its current value and delivers only changes.
    public func dropFirst(_ count: Int = 1) -> Publishers.Drop<Self> {
        Publishers.Drop(upstream: self, count: count)
    }
}

/// Asks upstream for the skipped values on top of the subscriber's first demand.
private final class DropSubscription<Downstream: Subscriber>: Subscriber, Subscription, @unchecked Sendable {
    typealias Input = Downstream.Input
    typealias Failure = Downstream.Failure

    private struct State {
        var upstream: (any Subscription)?
        var remaining: Int
        var askedForSkipped = false
    }
    private let downstream: Downstream
    private let state: LockedState<State>

    init(downstream: Downstream, count: Int) {
        self.downstream = downstream
        state = LockedState(State(remaining: count))
    }

    func receive(subscription: any Subscription) {
        state.withLock { $0.upstream = subscription }
        downstream.receive(subscription: self)
    }

    func request(_ demand: Subscribers.Demand) {
        let (upstream, total): ((any Subscription)?, Subscribers.Demand) = state.withLock { state in
            guard !state.askedForSkipped else { return (state.upstream, demand) }
            state.askedForSkipped = true
            return (state.upstream, demand + state.remaining)
        }
        upstream?.request(total)
    }

    func cancel() {
        let upstream = state.withLock { state in
            defer { state.upstream = nil }
            return state.upstream
        }
        upstream?.cancel()
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        let skipped = state.withLock { state in
            guard state.remaining > 0 else { return false }
            state.remaining -= 1
            return true
        }
        return skipped ? .none : downstream.receive(input)
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        downstream.receive(completion: completion)
    }
}

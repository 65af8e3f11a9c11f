extension Publishers {
    /// Delivers values and the completion on a scheduler: what `receive(on:)`
    /// returns, Combine's `Publishers.ReceiveOn`.
    public struct ReceiveOn<Upstream: Publisher, Context: Scheduler>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure

        /// The publisher whose values are moved.
        public let upstream: Upstream
        /// Where values are delivered.
        public let scheduler: Context
        /// How they are scheduled.
        public let options: Context.SchedulerOptions?

        public init(upstream: Upstream, scheduler: Context, options: Context.SchedulerOptions?) {
            self.upstream = upstream
            self.scheduler = scheduler
            self.options = options
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            upstream.subscribe(ReceiveOnSubscription(downstream: subscriber, scheduler: scheduler, options: options))
        }
    }
}

extension Publisher {
    /// Delivers values and the completion on `scheduler`:
    /// `receive(on: DispatchQueue.main)` or `receive(on: RunLoop.main)` before
    /// updating a user interface. Values arrive later, in order.
    public func receive<S: Scheduler>(on scheduler: S, options: S.SchedulerOptions? = nil) -> Publishers.ReceiveOn<Self, S> {
        Publishers.ReceiveOn(upstream: self, scheduler: scheduler, options: options)
    }
}

/// Forwards demand upstream at once and schedules each value downstream; what
/// the subscriber asks for while handling a value goes upstream from the scheduler.
private final class ReceiveOnSubscription<Downstream: Subscriber, Context: Scheduler>:
    Subscriber, Subscription, @unchecked Sendable {
    typealias Input = Downstream.Input
    typealias Failure = Downstream.Failure

    private struct State {
        var upstream: (any Subscription)?
        var cancelled = false
    }
    private let downstream: Downstream
    private let scheduler: Context
    private let options: Context.SchedulerOptions?
    private let state = LockedState(State())

    init(downstream: Downstream, scheduler: Context, options: Context.SchedulerOptions?) {
        self.downstream = downstream
        self.scheduler = scheduler
        self.options = options
    }

    func receive(subscription: any Subscription) {
        state.withLock { $0.upstream = subscription }
        downstream.receive(subscription: self)
    }

    func request(_ demand: Subscribers.Demand) {
        state.withLock { $0.upstream }?.request(demand)
    }

    func cancel() {
        let upstream = state.withLock { state in
            defer {
                state.upstream = nil
                state.cancelled = true
            }
            return state.upstream
        }
        upstream?.cancel()
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        scheduler.schedule(options: options) { [self] in
            guard !state.withLock({ $0.cancelled }) else { return }
            let more = downstream.receive(input)
            if more > .none { request(more) }
        }
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        scheduler.schedule(options: options) { [self] in
            guard !state.withLock({ $0.cancelled }) else { return }
            downstream.receive(completion: completion)
        }
    }
}

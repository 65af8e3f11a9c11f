import FamilyControls
import Foundation
import Testing

/// Publishes a fixed list, respecting demand, then finishes or fails: an app's
/// own `Publisher`, written against the protocol as with Combine.
private struct ListPublisher<Failure: Error>: Publisher {
    typealias Output = Int

    let values: [Int]
    var failure: Failure?

    init(values: [Int], failure: Failure? = nil) {
        self.values = values
        self.failure = failure
    }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == Failure {
        subscriber.receive(subscription: ListSubscription(values: values, failure: failure, subscriber: subscriber))
    }
}

private struct ListError: Error, Equatable {}

private final class ListSubscription<S: Subscriber>: Subscription where S.Input == Int {
    private var remaining: ArraySlice<Int>
    private let failure: S.Failure?
    private var subscriber: S?
    private var demand = Subscribers.Demand.none

    init(values: [Int], failure: S.Failure?, subscriber: S) {
        remaining = values[...]
        self.failure = failure
        self.subscriber = subscriber
    }

    func request(_ more: Subscribers.Demand) {
        demand += more
        while demand > .none, let subscriber, let next = remaining.popFirst() {
            demand -= 1
            demand += subscriber.receive(next)
        }
        if remaining.isEmpty, let subscriber {
            self.subscriber = nil
            subscriber.receive(completion: failure.map { .failure($0) } ?? .finished)
        }
    }

    func cancel() { subscriber = nil }
}

/// Requests one value at a time and asks for the next only when told to.
private final class OneAtATime<Input>: Subscriber {
    typealias Failure = Never
    var subscription: (any Subscription)?
    var received: [Input] = []

    func receive(subscription: any Subscription) {
        self.subscription = subscription
        subscription.request(.max(1))
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        received.append(input)
        return .none
    }

    func receive(completion: Subscribers.Completion<Never>) {}

    /// Ends the subscription and lets go of it: the subscription holds this
    /// subscriber until then, as a Combine subscription holds its downstream.
    func cancel() {
        subscription?.cancel()
        subscription = nil
    }
}

private final class Counter {
    var value = 0
    @Published var status: AuthorizationStatus = .notDetermined
}

/// Combine's operators on the library's publishers, with Combine's semantics.
@Suite struct PublisherOperatorTests {
    @Test func sinkWithCompletionSeesEveryValueThenFinished() {
        var values: [Int] = []
        var completions: [Subscribers.Completion<ListError>] = []
        let subscription = ListPublisher<ListError>(values: [1, 2, 3])
            .sink(receiveCompletion: { completions.append($0) }, receiveValue: { values.append($0) })
        #expect(values == [1, 2, 3])
        #expect(completions == [.finished])
        withExtendedLifetime(subscription) {}
    }

    @Test func sinkWithCompletionSeesTheFailure() {
        var completions: [Subscribers.Completion<ListError>] = []
        let subscription = ListPublisher(values: [1], failure: ListError())
            .sink(receiveCompletion: { completions.append($0) }, receiveValue: { _ in })
        #expect(completions == [.failure(ListError())])
        withExtendedLifetime(subscription) {}
    }

    @Test func mapDropFirstAndRemoveDuplicatesChain() {
        var values: [String] = []
        let subscription = ListPublisher<Never>(values: [0, 1, 1, 2, 2, 2, 3, 1])
            .dropFirst()
            .removeDuplicates()
            .map { "#\($0)" }
            .sink(receiveCompletion: { _ in }, receiveValue: { values.append($0) })
        #expect(values == ["#1", "#2", "#3", "#1"])
        withExtendedLifetime(subscription) {}
    }

    @Test func dropFirstOnAPropertySkipsItsCurrentValueOnly() {
        let counter = Counter()
        var values: [AuthorizationStatus] = []
        let subscription = counter.$status.dropFirst().sink { values.append($0) }
        counter.status = .denied
        counter.status = .approved
        #expect(values == [.denied, .approved])
        var two: [AuthorizationStatus] = []
        let skipTwo = counter.$status.dropFirst(2).sink { two.append($0) }
        counter.status = .notDetermined
        counter.status = .approved
        #expect(two == [.approved])
        withExtendedLifetime((subscription, skipTwo)) {}
    }

    @Test func removeDuplicatesByAPredicate() {
        var values: [Int] = []
        let subscription = ListPublisher<Never>(values: [1, 3, 5, 6, 8, 9])
            .removeDuplicates { $0 % 2 == $1 % 2 }
            .sink(receiveCompletion: { _ in }, receiveValue: { values.append($0) })
        #expect(values == [1, 6, 9])
        withExtendedLifetime(subscription) {}
    }

    @Test func droppedAndDuplicateValuesDoNotUseUpASubscribersDemand() {
        let subscriber = OneAtATime<Int>()
        ListPublisher<Never>(values: [7, 7, 7, 8, 9]).dropFirst().removeDuplicates().subscribe(subscriber)
        #expect(subscriber.received == [7])
        subscriber.subscription?.request(.max(1))
        #expect(subscriber.received == [7, 8])
        subscriber.cancel()
    }

    @Test func aPropertyHoldsItsLatestValueUntilTheSubscriberAsks() {
        let counter = Counter()
        let subscriber = OneAtATime<AuthorizationStatus>()
        counter.$status.subscribe(subscriber)
        #expect(subscriber.received == [.notDetermined])
        counter.status = .denied
        counter.status = .approved
        #expect(subscriber.received == [.notDetermined])
        subscriber.subscription?.request(.max(1))
        #expect(subscriber.received == [.notDetermined, .approved])
        subscriber.subscription?.cancel()
        counter.status = .denied
        subscriber.subscription?.request(.max(1))
        #expect(subscriber.received == [.notDetermined, .approved])
    }

    @Test func objectWillChangeDropsWhatNobodyAskedFor() {
        let publisher = ObservableObjectPublisher()
        let subscriber = OneAtATime<Void>()
        publisher.subscribe(subscriber)
        publisher.send()
        publisher.send()
        #expect(subscriber.received.count == 1)
        subscriber.subscription?.request(.max(1))
        #expect(subscriber.received.count == 1)
        publisher.send()
        #expect(subscriber.received.count == 2)
        subscriber.cancel()
    }

    // Found by the suite under AddressSanitizer: LeakSanitizer reported
    // receiveOnAQueueDeliversThere's sink and everything its closure held.
    // Like Combine's, a sink lets go of its closures once cancelled or
    // finished; it kept them, so an object holding its own subscription, whose
    // closure holds the object, stayed alive after cancel().
    @Test func aSinkLetsGoOfItsClosuresOnceCancelledOrFinished() {
        final class Owner { var subscription: AnyCancellable? }
        final class Token {}
        let counter = Counter()
        weak var cancelledOwner: Owner?
        weak var finishedToken: Token?
        var finished: AnyCancellable?
        do {
            let owner = Owner()
            cancelledOwner = owner
            owner.subscription = counter.$status.sink { _ in withExtendedLifetime(owner) {} }
            owner.subscription?.cancel()

            let token = Token()
            finishedToken = token
            finished = ListPublisher<Never>(values: [1]).sink(receiveCompletion: { _ in withExtendedLifetime(token) {} },
                                                              receiveValue: { _ in })
        }
        #expect(cancelledOwner == nil, "a cancelled sink still held its closure")
        #expect(finishedToken == nil, "a finished sink still held its closure")
        withExtendedLifetime(finished) {}
    }

    @Test func assignToOnWritesEveryValueAndReleasesTheObjectWhenFinished() {
        weak var released: Counter?
        var subscription: AnyCancellable?
        do {
            let target = Counter()
            released = target
            subscription = ListPublisher<Never>(values: [4, 5]).assign(to: \.value, on: target)
            #expect(target.value == 5)
        }
        #expect(released == nil)
        withExtendedLifetime(subscription) {}
    }

    @Test func assignToOnHoldsTheObjectUntilCancelled() {
        let source = Counter()
        weak var released: Counter?
        var subscription: AnyCancellable?
        do {
            let target = Counter()
            released = target
            subscription = source.$status.map(\.rawValue).assign(to: \.value, on: target)
            source.status = .approved
            #expect(target.value == 2)
        }
        #expect(released != nil)
        subscription?.cancel()
        #expect(released == nil)
    }

    @Test func eraseToAnyPublisherKeepsTheValues() {
        let counter = Counter()
        let erased: AnyPublisher<AuthorizationStatus, Never> = counter.$status.eraseToAnyPublisher()
        let twice = AnyPublisher(erased)
        var values: [AuthorizationStatus] = []
        let subscription = twice.sink { values.append($0) }
        counter.status = .approved
        #expect(values == [.notDetermined, .approved])
        withExtendedLifetime(subscription) {}
    }

    @MainActor @Test func receiveOnTheMainQueueDeliversLaterOnTheMainThreadInOrder() async {
        let counter = Counter()
        let delivered = await withCheckedContinuation { (continuation: CheckedContinuation<[AuthorizationStatus], Never>) in
            var values: [AuthorizationStatus] = []
            var subscription: AnyCancellable?
            subscription = counter.$status
                .receive(on: DispatchQueue.main)
                .sink { value in
                    #expect(onMainQueue())
                    values.append(value)
                    if value == .approved {
                        subscription?.cancel()
                        continuation.resume(returning: values)
                    }
                }
            #expect(values.isEmpty, "receive(on:) delivers later, never inside the call")
            counter.status = .denied
            counter.status = .approved
        }
        #expect(delivered == [.notDetermined, .denied, .approved])
    }

    @Test func receiveOnTheMainRunLoopDeliversOnTheMainThread() async {
        let counter = Counter()
        let onMain = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let subscription = LockedSubscription()
            subscription.set(counter.$status.dropFirst().receive(on: RunLoop.main).sink { _ in
                subscription.cancel()
                continuation.resume(returning: onMainQueue())
            })
            counter.status = .denied
        }
        #expect(onMain)
    }

    @Test func receiveOnAQueueDeliversThere() async {
        let queue = DispatchQueue(label: "receive-on-test")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let counter = Counter()
        let subscription = LockedSubscription()
        let onQueue = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            subscription.set(counter.$status.receive(on: queue, options: .init(qos: .userInitiated)).sink { _ in
                subscription.cancel()
                continuation.resume(returning: DispatchQueue.getSpecific(key: key) == true)
            })
        }
        #expect(onQueue)
        // Again here: the first value can arrive, and cancel, before set() has stored the subscription.
        subscription.cancel()
    }

    @MainActor @Test func cancellingAReceiveOnChainDropsValuesAlreadyScheduled() async {
        let counter = Counter()
        var values: [AuthorizationStatus] = []
        let subscription = counter.$status.receive(on: DispatchQueue.main).sink { values.append($0) }
        counter.status = .denied
        // Both values wait on the main queue, behind this test.
        subscription.cancel()
        await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        #expect(values.isEmpty)
    }

    @Test func demandAddsUpToUnlimitedAndNeverGoesBelowNone() {
        typealias Demand = Subscribers.Demand
        #expect(Demand.max(2) + .max(3) == .max(5))
        #expect(Demand.max(2) + .unlimited == .unlimited)
        #expect(Demand.unlimited - .max(4) == .unlimited)
        #expect(Demand.max(3) - .max(5) == .none)
        #expect(Demand.max(3) - .unlimited == .none)
        #expect(Demand.max(1) + 2 == .max(3))
        #expect(Demand.max(Int.max) + .max(Int.max) == .unlimited)
    }

    @Test func demandComparesWithNumbers() {
        #expect(Subscribers.Demand.max(2) > 1)
        #expect(Subscribers.Demand.none == 0)
        #expect(Subscribers.Demand.unlimited > Int.max)
        #expect(Subscribers.Demand.unlimited.max == nil)
        #expect(Subscribers.Demand.max(4).max == 4)
    }
}

/// Whether the caller runs in a block of the main dispatch queue, which the
/// main actor and the main run loop use (the test runner may serve it from a
/// thread other than the process's first).
private func onMainQueue() -> Bool {
    DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()

/// A cancellable that a sink's own closure can cancel, from any thread.
private final class LockedSubscription: @unchecked Sendable {
    private let lock = NSLock()
    private var subscription: AnyCancellable?
    func set(_ subscription: AnyCancellable) { lock.withLock { self.subscription = subscription } }
    func cancel() { lock.withLock { subscription }?.cancel() }
}

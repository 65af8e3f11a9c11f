import Observation
import Synchronization

/// A property that publishes every new value, so `center.$authorizationStatus.sink { … }`
/// works as it does with Combine's `@Published` (Combine does not exist on Linux).
///
/// Unlike Combine's, subscribers hear a value after the property holds it, so
/// reading the property inside `sink` gives the new value. The enclosing
/// object's Observation registrar is told of every read and write, so SwiftUI-style
/// `withObservationTracking` sees changes too.
@propertyWrapper
public struct Published<Value: Sendable & Equatable>: Sendable {
    private let storage: PublishedStorage<Value>

    public init(wrappedValue: Value) {
        storage = PublishedStorage(wrappedValue)
    }

    @available(*, unavailable, message: "@Published is only available on properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") } // swiftlint:disable:this unused_setter_value
    }

    /// The publisher of the property's values: `$property`.
    public var projectedValue: Publisher { Publisher(storage: storage) }

    public static subscript<Enclosing: PublishingObservable>(
        _enclosingInstance instance: Enclosing,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Enclosing, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Enclosing, Published<Value>>
    ) -> Value {
        get {
            instance.observationRegistrar.access(instance, keyPath: wrappedKeyPath)
            return instance[keyPath: storageKeyPath].storage.value
        }
        set {
            let storage = instance[keyPath: storageKeyPath].storage
            guard storage.value != newValue else { return }
            instance.observationRegistrar.withMutation(of: instance, keyPath: wrappedKeyPath) {
                storage.value = newValue
            }
            storage.publish(newValue)
        }
    }

    /// Delivers a property's values to subscribers: the current one at once,
    /// then every change.
    public struct Publisher: Sendable {
        fileprivate let storage: PublishedStorage<Value>

        /// Calls `receiveValue` on the main actor with the current value now and
        /// with every new value, until the returned cancellable is cancelled or released.
        @MainActor
        public func sink(receiveValue: @escaping @MainActor (Value) -> Void) -> AnyCancellable {
            let receive = UncheckedSendable(receiveValue)
            // Values are published by the property's setter, which runs on the main actor.
            return storage.subscribe { value in MainActor.assumeIsolated { receive.value(value) } }
        }

        /// Calls `receive` on the main actor now and after every change; read the
        /// property inside it. This is the form Apple's reference text uses:
        /// `center.$authorizationStatus.sink() { switch center.authorizationStatus { … } }`.
        @MainActor
        public func sink(_ receive: @escaping @MainActor () -> Void) -> AnyCancellable {
            sink(receiveValue: { _ in receive() })
        }

        /// The values as an asynchronous sequence: the current one, then every change.
        public var values: AsyncStream<Value> {
            AsyncStream { continuation in
                let subscription = storage.subscribe { continuation.yield($0) }
                continuation.onTermination = { _ in subscription.cancel() }
            }
        }
    }
}

/// An object whose `@Published` properties report to an Observation registrar.
public protocol PublishingObservable: AnyObject, Observable {
    /// The registrar `@Published` properties report reads and writes to.
    var observationRegistrar: ObservationRegistrar { get }
}

/// A subscription; cancelled when `cancel()` is called or the value is released,
/// like Combine's `AnyCancellable`.
public final class AnyCancellable: Hashable, Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    public init(_ cancel: @escaping @Sendable () -> Void) {
        cancellation = Mutex(cancel)
    }

    deinit { cancel() }

    /// Stops the subscription; later calls do nothing.
    public func cancel() {
        let body = cancellation.withLock { body in
            defer { body = nil }
            return body
        }
        body?()
    }

    /// Keeps the subscription alive as long as `set` holds it.
    public func store(in set: inout Set<AnyCancellable>) { set.insert(self) }

    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Carries a main-actor closure through a `@Sendable` one; it is only ever called on the main actor.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The shared box behind a `@Published` property and its publisher.
final class PublishedStorage<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var nextID = 0
        var subscribers: [Int: @Sendable (Value) -> Void] = [:]
    }
    private let state: Mutex<State>

    init(_ value: Value) { state = Mutex(State(value: value)) }

    var value: Value {
        get { state.withLock { $0.value } }
        set { state.withLock { $0.value = newValue } }
    }

    func publish(_ value: Value) {
        let subscribers = state.withLock { Array($0.subscribers.sorted { $0.key < $1.key }.map(\.value)) }
        for subscriber in subscribers { subscriber(value) }
    }

    func subscribe(_ receive: @escaping @Sendable (Value) -> Void) -> AnyCancellable {
        let (id, current) = state.withLock { state in
            state.nextID += 1
            state.subscribers[state.nextID] = receive
            return (state.nextID, state.value)
        }
        receive(current)
        return AnyCancellable { [weak self] in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
    }
}

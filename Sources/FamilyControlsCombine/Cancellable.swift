import Synchronization

/// Something that can be cancelled: Combine's `Cancellable`.
public protocol Cancellable {
    /// Stops the activity and frees its resources; later calls do nothing.
    func cancel()
}

extension Cancellable {
    /// Keeps this activity alive as long as `collection` holds it.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        AnyCancellable(self).store(in: &collection)
    }

    /// Keeps this activity alive as long as `set` holds it.
    public func store(in set: inout Set<AnyCancellable>) {
        AnyCancellable(self).store(in: &set)
    }
}

/// A subscription that is cancelled when `cancel()` is called or the value is
/// released: Combine's `AnyCancellable`. Unlike Combine's it is `Sendable`, so
/// an `AsyncStream`'s `onTermination` can cancel it.
public final class AnyCancellable: Cancellable, Hashable, Sendable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    /// Calls `cancel` once, when cancelled or released.
    public init(_ cancel: @escaping @Sendable () -> Void) {
        cancellation = Mutex(cancel)
    }

    /// Cancels `canceller` once, when cancelled or released.
    ///
    /// Combine asks every `Cancellable` to accept `cancel()` from any thread.
    public convenience init<C: Cancellable>(_ canceller: C) {
        let cancel = UncheckedSendable(canceller.cancel)
        self.init { cancel.value() }
    }

    deinit { cancel() }

    public func cancel() {
        let body = cancellation.withLock { body in
            defer { body = nil }
            return body
        }
        body?()
    }

    /// Keeps the subscription alive as long as `collection` holds it.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        collection.append(self)
    }

    /// Keeps the subscription alive as long as `set` holds it.
    public func store(in set: inout Set<AnyCancellable>) {
        set.insert(self)
    }

    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

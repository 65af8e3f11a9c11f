/// A property that publishes its values: Combine's `@Published`, which Linux lacks.
///
/// Works on any class, as Combine's does:
///
/// ```swift
/// final class ScreenTimeModel: ObservableObject {
///     @Published var isApproved = false
/// }
/// model.$isApproved.dropFirst().sink { print("now", $0) }
/// ```
///
/// `$property` delivers the current value to each new subscriber, then every
/// value set, even an equal one (use `removeDuplicates()`). Before a value is
/// stored, the owner's default `objectWillChange` fires; the owner's
/// Observation registrar, when it is ``PublishingObservable``, is told of every
/// read and write.
///
/// One difference from Combine: subscribers hear a value after the property
/// holds it, so reading the property inside `sink`, as Apple's example for
/// `authorizationStatus` does, gives the new value rather than the old one.
@propertyWrapper
public struct Published<Value> {
    let subject: PublishedSubject<Value>

    /// A property starting at `wrappedValue`.
    public init(wrappedValue: Value) {
        subject = PublishedSubject(wrappedValue)
    }

    /// A property starting at `initialValue`.
    public init(initialValue: Value) {
        self.init(wrappedValue: initialValue)
    }

    @available(*, unavailable, message: "@Published is only available on properties of classes")
    public var wrappedValue: Value {
        get { fatalError("@Published is only available on properties of classes") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("@Published is only available on properties of classes") }
    }

    /// The publisher of the property's values: `$property`.
    ///
    /// Settable only so that `assign(to: &$property)` can take it in-out; the
    /// property keeps publishing its own values.
    public var projectedValue: Publisher {
        get { Publisher(subject: subject) }
        // swiftlint:disable:next unused_setter_value
        nonmutating set {}
    }

    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Published<Value>>
    ) -> Value {
        get {
            (object as? any PublishingObservable)?.observationAccess(wrappedKeyPath)
            return object[keyPath: storageKeyPath].subject.value
        }
        set {
            let subject = object[keyPath: storageKeyPath].subject
            subject.willChange(of: object)?.send()
            if let observable = object as? any PublishingObservable {
                observable.observationMutation(wrappedKeyPath) { subject.set(newValue) }
            } else {
                subject.set(newValue)
            }
        }
    }

    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance object: EnclosingSelf,
        projected projectedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Publisher>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Published<Value>>
    ) -> Publisher {
        get {
            let subject = object[keyPath: storageKeyPath].subject
            // `assign(to: &$property)` sets values without the object at hand.
            subject.noteOwner(object)
            return Publisher(subject: subject)
        }
        // swiftlint:disable:next unused_setter_value
        set {}
    }

    /// Delivers a property's values: the current one on a subscriber's first
    /// demand, then every value set. Never fails.
    public struct Publisher: FamilyControlsCombine.Publisher {
        public typealias Output = Value
        public typealias Failure = Never

        let subject: PublishedSubject<Value>

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
            subject.attach(subscriber)
        }

        /// Calls `receive` now and after every change, without the value; read
        /// the property inside it. This is the form Apple's reference text uses:
        /// `center.$authorizationStatus.sink() { switch center.authorizationStatus { … } }`.
        public func sink(_ receive: @escaping () -> Void) -> AnyCancellable {
            sink(receiveValue: { _ in receive() })
        }
    }
}

extension Published: Sendable where Value: Sendable {}
extension Published.Publisher: Sendable where Value: Sendable {}

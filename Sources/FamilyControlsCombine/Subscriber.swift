/// Receives values from a publisher: Combine's `Subscriber`.
///
/// `sink` and `assign` attach the library's own subscribers; an app may write
/// its own, which must request values through the subscription it receives.
public protocol Subscriber<Input, Failure>: CustomCombineIdentifierConvertible {
    /// The kind of values received.
    associatedtype Input
    /// The kind of error received.
    associatedtype Failure: Error

    /// The publisher accepted the subscription; request values through `subscription`.
    func receive(subscription: any Subscription)
    /// A value; returns how many more values the subscriber wants, on top of what it asked for.
    func receive(_ input: Input) -> Subscribers.Demand
    /// The publisher finished, normally or with an error; nothing follows.
    func receive(completion: Subscribers.Completion<Failure>)
}

/// The subscribers and the subscriber vocabulary, as in Combine.
public enum Subscribers {}

/// Delivers values over time to subscribers: Combine's `Publisher`, which
/// Linux lacks.
///
/// The library's publishers are `$authorizationStatus`, the projected value of
/// any `@Published` property, and `objectWillChange`; the operators apps chain
/// on them (`map`, `dropFirst`, `removeDuplicates`, `receive(on:)`,
/// `eraseToAnyPublisher`) end in `sink`, `assign` or `values`. They keep
/// Combine's names and rules: a subscriber receives a subscription, then values
/// as it demands them, then at most one completion.
public protocol Publisher<Output, Failure> {
    /// The kind of values published.
    associatedtype Output
    /// The kind of error published; `Never` for the library's publishers.
    associatedtype Failure: Error

    /// Attaches `subscriber`. Publishers implement this; callers use ``subscribe(_:)``.
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure
}

extension Publisher {
    /// Attaches `subscriber`, which then receives a subscription to request values from.
    public func subscribe<S: Subscriber>(_ subscriber: S) where S.Input == Output, S.Failure == Failure {
        receive(subscriber: subscriber)
    }
}

/// The publishers that operators return, as in Combine.
public enum Publishers {}

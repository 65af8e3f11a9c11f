/// A publisher with its type erased: Combine's `AnyPublisher`, what
/// `eraseToAnyPublisher()` returns, so an API can promise
/// `AnyPublisher<AuthorizationStatus, Never>` without naming the chain behind it.
public struct AnyPublisher<Output, Failure: Error>: Publisher {
    private let box: AnyPublisherBox<Output, Failure>

    /// Wraps `publisher`.
    public init<P: Publisher>(_ publisher: P) where P.Output == Output, P.Failure == Failure {
        if let erased = publisher as? AnyPublisher<Output, Failure> {
            box = erased.box
        } else {
            box = PublisherBox(publisher)
        }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        box.receive(subscriber: subscriber)
    }
}

extension Publisher {
    /// This publisher as an ``AnyPublisher``.
    public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> {
        AnyPublisher(self)
    }
}

private class AnyPublisherBox<Output, Failure: Error> {
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        preconditionFailure("AnyPublisherBox.receive(subscriber:) must be overridden")
    }
}

private final class PublisherBox<Base: Publisher>: AnyPublisherBox<Base.Output, Base.Failure> {
    private let base: Base

    init(_ base: Base) {
        self.base = base
    }

    override func receive<S: Subscriber>(subscriber: S) where S.Input == Base.Output, S.Failure == Base.Failure {
        base.receive(subscriber: subscriber)
    }
}

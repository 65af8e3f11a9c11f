extension Publisher where Failure == Never, Output: Sendable {
    /// The values as an asynchronous sequence, for `for await`: Combine's
    /// `values`. Every value is kept until read; the subscription ends when the
    /// loop does.
    public var values: AsyncStream<Output> {
        AsyncStream { continuation in
            let subscription = sink { continuation.yield($0) }
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }
}

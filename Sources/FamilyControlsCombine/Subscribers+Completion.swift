extension Subscribers {
    /// How a publisher ended: Combine's `Subscribers.Completion`.
    public enum Completion<Failure: Error> {
        /// Normally; no more values.
        case finished
        /// With an error; no more values.
        case failure(Failure)
    }
}

extension Subscribers.Completion: Equatable where Failure: Equatable {}
extension Subscribers.Completion: Hashable where Failure: Hashable {}
extension Subscribers.Completion: Sendable where Failure: Sendable {}

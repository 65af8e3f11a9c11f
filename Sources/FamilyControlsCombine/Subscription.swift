/// A subscriber's link to a publisher: Combine's `Subscription`.
///
/// Both methods may be called from any thread.
public protocol Subscription: Cancellable, CustomCombineIdentifierConvertible {
    /// Asks for up to `demand` more values; `demand` is never `.none`.
    func request(_ demand: Subscribers.Demand)
}

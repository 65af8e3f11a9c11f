/// Carries a value that is not `Sendable` across a `@Sendable` boundary.
///
/// Used only where Combine's contract makes the crossing the caller's choice:
/// a subscriber's closure runs on the thread that publishes, or on the
/// scheduler it named with `receive(on:)`; a completion handler runs where
/// ``AuthorizationCenter`` documents it.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

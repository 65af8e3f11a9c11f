/// Calls an app's completion handler once, where the app can use it.
///
/// Apple's handlers are plain `@escaping` closures, so a handler written in
/// main-actor code (a view model) is isolated to the main actor and must run
/// there: a call made on the main actor is answered on the main actor. A call
/// made elsewhere is answered on the library's own task, as Apple answers on a
/// queue of its own. The handler is never called twice or from two threads.
struct CompletionDelivery<Value: Sendable>: @unchecked Sendable {
    private let handler: (Value) -> Void
    private let onMainActor: Bool

    init(_ handler: @escaping (Value) -> Void) {
        self.handler = handler
        onMainActor = MainQueue.isCurrent
    }

    func deliver(_ value: Value) async {
        if onMainActor {
            await MainActor.run { handler(value) }
        } else {
            handler(value)
        }
    }
}

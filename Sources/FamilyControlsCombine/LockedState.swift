import Foundation

/// State behind a lock, for the publishing types. Their values and subscribers
/// need not be `Sendable`, which `Mutex` asks of anything handed out of it.
///
/// Never call a subscriber or an app's closure inside ``withLock(_:)``: they
/// may subscribe, cancel or publish again.
final class LockedState<State>: @unchecked Sendable {
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

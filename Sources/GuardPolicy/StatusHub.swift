import FamilyControlsModel
import Synchronization

/// Who is watching which (user, app) status, so a change reaches every
/// running copy of the app (`Subscribe`), and graduations and admin changes
/// reach apps within a second.
package final class StatusHub: Sendable {
    package struct Key: Hashable, Sendable {
        package var user: String
        package var appID: String
        package init(user: String, appID: String) {
            self.user = user
            self.appID = appID
        }
    }

    package typealias Listener = @Sendable (AuthorizationStatus) -> Void

    private struct State {
        var nextID = 0
        var listeners: [Key: [Int: Listener]] = [:]
    }
    private let state = Mutex(State())

    package init() {}

    /// Adds `listener` for `key`; returns a token for ``remove(_:)``.
    package func add(_ key: Key, _ listener: @escaping Listener) -> (Key, Int) {
        state.withLock { state in
            state.nextID += 1
            state.listeners[key, default: [:]][state.nextID] = listener
            return (key, state.nextID)
        }
    }

    package func remove(_ token: (Key, Int)) {
        state.withLock { state in
            state.listeners[token.0]?[token.1] = nil
            if state.listeners[token.0]?.isEmpty == true { state.listeners[token.0] = nil }
        }
    }

    /// Tells every listener of `key` the new status.
    package func publish(_ key: Key, _ status: AuthorizationStatus) {
        let listeners = state.withLock { Array(($0.listeners[key] ?? [:]).values) }
        for listener in listeners { listener(status) }
    }
}

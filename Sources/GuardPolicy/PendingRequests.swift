import Synchronization

/// The requests waiting for a parent or guardian, bounded per child and in
/// all, and who is watching them (`familyctl requests --watch`).
package final class PendingRequests: Sendable {
    /// Requests one child may have waiting at once (``GuardLimits/pendingRequestsPerUser``).
    package let perUser: Int
    /// Requests waiting at once, every child together (``GuardLimits/pendingRequestsTotal``).
    package let total: Int

    package typealias Watcher = @Sendable () -> Void

    private struct State {
        var requests: [Int64: PendingRequest] = [:]
        var nextWatcher = 0
        var watchers: [Int: Watcher] = [:]
    }
    private let state = Mutex(State())

    package init(perUser: Int, total: Int) {
        self.perUser = perUser
        self.total = total
    }

    /// Whether `user` may add a request now: neither they nor everyone has
    /// as many waiting as allowed.
    func hasRoom(for user: String) -> Bool {
        state.withLock { hasRoom(for: user, in: $0) }
    }

    private func hasRoom(for user: String, in state: State) -> Bool {
        state.requests.values.filter { $0.user == user }.count < perUser && state.requests.count < total
    }

    /// Adds request `id` (a number never given before, see
    /// ``Store/next(_:)``) for `caller`; nil when the child, or everyone, has
    /// as many waiting as allowed.
    func add(_ id: Int64, _ purpose: PendingRequest.Purpose, for caller: Caller, update: PendingRequest.Update? = nil,
             source: String? = nil, proposal: PendingRequest.Proposal? = nil, timeout: Duration) -> PendingRequest? {
        let added = state.withLock { state -> PendingRequest? in
            guard hasRoom(for: caller.account.name, in: state), state.requests[id] == nil else { return nil }
            let request = PendingRequest(id: id, purpose: purpose, caller: caller, update: update, source: source,
                                         proposal: proposal, timeout: timeout)
            state.requests[request.id] = request
            return request
        }
        if added != nil { notify() }
        return added
    }

    func remove(_ request: PendingRequest) {
        let removed = state.withLock { $0.requests.removeValue(forKey: request.id) != nil }
        if removed { notify() }
    }

    func request(_ id: Int64) -> PendingRequest? {
        state.withLock { $0.requests[id] }
    }

    /// A request still waiting for another app of `caller`'s user in the very
    /// folder `caller` was identified in (the folder renamed meanwhile).
    func waiting(onFolderOf caller: Caller) -> PendingRequest? {
        state.withLock { state in
            state.requests.values.filter {
                $0.user == caller.account.name && $0.appID != caller.app.appID
                    && $0.caller.app.directoryIdentity == caller.app.directoryIdentity && $0.ending == nil
            }.min { $0.id < $1.id }
        }
    }

    /// Every request waiting, oldest first.
    var all: [PendingRequest] {
        state.withLock { Array($0.requests.values) }.sorted { $0.id < $1.id }
    }

    /// Runs `watcher` after every change; returns a token for ``unwatch(_:)``.
    func watch(_ watcher: @escaping Watcher) -> Int {
        state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = watcher
            return state.nextWatcher
        }
    }

    func unwatch(_ token: Int) {
        _ = state.withLock { $0.watchers.removeValue(forKey: token) }
    }

    private func notify() {
        let watchers = state.withLock { Array($0.watchers.values) }
        for watcher in watchers { watcher() }
    }
}

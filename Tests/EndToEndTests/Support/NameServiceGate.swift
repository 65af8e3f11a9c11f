import TestSupport

/// The machine's user and group lookups (`/etc/nsswitch.conf`) as a resource
/// the end-to-end tests share.
///
/// A directory test adds `sss` to the machine's `passwd` and `group` lines,
/// and stops, empties and starts SSSD while it runs. Every other process on
/// the machine then asks SSSD too (`getgrouplist` asks every source, even
/// for a local user) and waits for it: a Guard that another test started
/// stayed in libnss_sss's `poll` for over 60 s at its start, its only
/// thread there, in a full run. So a directory test holds the gate alone,
/// and every Guard fixture holds it shared. A waiting directory test goes
/// first: new Guard fixtures wait behind it, and the ones running finish.
actor NameServiceGate {
    static let shared = NameServiceGate()

    /// Whether the running task already holds the gate, either way; a
    /// fixture inside another (a Guard in a directory test) does not wait.
    @TaskLocal static var held = false

    private var sharers = 0
    private var alone = false
    private var waitingAlone: [CheckedContinuation<Void, Never>] = []
    private var waitingShared: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` holding the shared gate shared (a Guard fixture).
    static func sharing<R>(_ body: () async throws -> R) async throws -> R {
        try await shared.sharing(body)
    }

    /// Runs `body` holding the shared gate alone (a directory test).
    static func alone<R>(_ body: () async throws -> R) async throws -> R {
        try await shared.alone(body)
    }

    /// Runs `body` holding this gate shared.
    nonisolated func sharing<R>(_ body: () async throws -> R) async throws -> R {
        if Self.held { return try await body() }
        return try await holding(enter: { await self.enterShared() }, leave: { await self.leaveShared() }, body)
    }

    /// Runs `body` holding this gate alone.
    nonisolated func alone<R>(_ body: () async throws -> R) async throws -> R {
        guard !Self.held else { throw FixtureError("a directory cannot start inside a Guard fixture: the gate is already held") }
        return try await holding(enter: { await self.enterAlone() }, leave: { await self.leaveAlone() }, body)
    }

    /// Runs `body` between `enter` and `leave`, marked as holding the gate.
    private nonisolated func holding<R>(enter: () async -> Void, leave: () async -> Void,
                                        _ body: () async throws -> R) async throws -> R {
        await enter()
        do {
            let result = try await Self.$held.withValue(true) { try await body() }
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }

    /// How many wait to hold the gate alone, and shared.
    var waiting: (alone: Int, shared: Int) { (waitingAlone.count, waitingShared.count) }

    private func enterShared() async {
        if !alone && waitingAlone.isEmpty {
            sharers += 1
            return
        }
        await withCheckedContinuation { waitingShared.append($0) }
    }

    private func leaveShared() {
        sharers -= 1
        if sharers == 0, !waitingAlone.isEmpty {
            alone = true
            waitingAlone.removeFirst().resume()
        }
    }

    private func enterAlone() async {
        if !alone && sharers == 0 {
            alone = true
            return
        }
        await withCheckedContinuation { waitingAlone.append($0) }
    }

    private func leaveAlone() {
        if !waitingAlone.isEmpty {
            waitingAlone.removeFirst().resume()
            return
        }
        alone = false
        sharers += waitingShared.count
        for waiting in waitingShared { waiting.resume() }
        waitingShared.removeAll()
    }
}

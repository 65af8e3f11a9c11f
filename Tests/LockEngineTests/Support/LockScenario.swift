#if canImport(Glibc)
import Glibc
#endif
import LockEngine
import SystemKit
import Testing

/// Everything one lock test needs: a child user, a sandbox with the demo app
/// built in the child's home, and an engine over an in-memory journal.
struct LockScenario {
    static let appID = "org.example.Demo"

    let sandbox: LockSandbox
    let journal: LockMemoryJournal
    let engine: LockEngine

    var child: ChildUser { sandbox.child }
    var app: String { sandbox.app }

    /// A new engine over the same journal, as after a restart.
    func restartedEngine(hooks: LockEngineHooks = .none) -> LockEngine {
        LockEngine(journal: journal, logger: .lockTests, hooks: hooks)
    }

    @discardableResult
    func lock() throws -> LockReport {
        try engine.lock(user: child.name, appID: Self.appID, directory: app)
    }

    @discardableResult
    func unlock() throws -> UnlockReport {
        try engine.unlock(user: child.name, appID: Self.appID)
    }

    func record() throws -> LockRecord? {
        try journal.lockRecord(user: child.name, appID: Self.appID)
    }
}

/// Creates a child user and a sandbox with the demo app (plus `extraFiles`),
/// runs `body` on a thread of its own (it blocks), and removes both.
func withLockScenario<R>(
    extraFiles: Int = 0, hooks: LockEngineHooks = .none, buildApp: Bool = true,
    _ body: (LockScenario) throws -> R
) async throws -> R {
    try await blocking {
        try withLockScenarioBlocking(extraFiles: extraFiles, hooks: hooks, buildApp: buildApp, body)
    }
}

private func withLockScenarioBlocking<R>(
    extraFiles: Int, hooks: LockEngineHooks, buildApp: Bool, _ body: (LockScenario) throws -> R
) throws -> R {
    try withChildUser { child in
        try withLockSandbox(child: child) { sandbox in
            if buildApp { try LockAppTree.make(in: sandbox, extraFiles: extraFiles) }
            let journal = LockMemoryJournal()
            let engine = LockEngine(journal: journal, logger: .lockTests, hooks: hooks)
            return try body(LockScenario(sandbox: sandbox, journal: journal, engine: engine))
        }
    }
}

extension Logger {
    /// Keeps lock notices out of the test output.
    static let lockTests = Logger(label: "lock-test", minimumLevel: .error)
}

/// Whether this process may do what lock tests need: create users, chown, chattr.
let lockTestsCanRun = getuid() == 0

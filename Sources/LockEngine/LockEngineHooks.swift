/// Points where a test can interrupt the lock engine.
package struct LockEngineHooks: Sendable {
    /// Called with an entry's path (relative to the app directory) just before
    /// the engine changes its owner, mode or flags. Throwing stops the
    /// operation there and leaves the journal as a crash would.
    package var beforeChange: @Sendable (_ relativePath: String) throws -> Void

    package init(beforeChange: @escaping @Sendable (_ relativePath: String) throws -> Void) {
        self.beforeChange = beforeChange
    }

    /// No interruptions: what the Guard uses.
    package static let none = LockEngineHooks { _ in }
}

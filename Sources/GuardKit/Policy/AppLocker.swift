/// An approved child app whose directory must be locked, with the folders its
/// directory may be found under if the child moved things around.
package struct ApprovedApp: Hashable, Sendable {
    package var user: String
    package var appID: String
    package var directory: String
    package var roots: [String]

    package init(user: String, appID: String, directory: String, roots: [String]) {
        self.user = user
        self.appID = appID
        self.directory = directory
        self.roots = roots
    }
}

/// The seam between an approval and the file-permission lock on the app's
/// directory. The Guard calls it after an approval is durable, and to release
/// the lock after a revoke; reconcile asks it to check and repair.
package protocol AppLocker: Sendable {
    /// Locks `directory` for (user, app); returns the resulting state
    /// (`locked`, or `unenforced` with the reason the filesystem cannot hold it).
    func lock(user: String, appID: String, directory: String) throws -> LockState
    /// Releases the lock and restores what was recorded; returns findings
    /// worth logging (entries changed by an administrator meanwhile).
    func unlock(user: String, appID: String, roots: [String]) throws -> [String]
    /// The lock's current state and path, nil when nothing is recorded.
    func state(user: String, appID: String, roots: [String]) -> (state: LockState, path: String)?
    /// Finishes interrupted work, checks that every app in `approved` is locked
    /// and nothing else is; with `repair`, fixes drift. Returns human-readable
    /// findings, empty when everything was whole.
    func verify(approved: [ApprovedApp], repair: Bool) throws -> [String]
}

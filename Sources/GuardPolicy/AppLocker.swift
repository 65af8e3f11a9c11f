import LockEngine
/// An approved child app whose directory must be locked: the directory that
/// was approved (its path when last seen, and which object it is), and the
/// folders it may be found under if the child moved things around.
package struct ApprovedApp: Hashable, Sendable {
    package var user: String
    package var appID: String
    package var directory: String
    /// Device and inode of the approved directory; nil for an approval
    /// recorded before they were kept.
    package var identity: FileIdentity?
    package var roots: [String]
    /// Whether the lock may take files linked outside the directory (a
    /// per-user Flatpak deployment, whose files are links of its repository's objects).
    package var linksOutsideAllowed: Bool

    package init(user: String, appID: String, directory: String, identity: FileIdentity?, roots: [String],
                 linksOutsideAllowed: Bool = false) {
        self.user = user
        self.appID = appID
        self.directory = directory
        self.identity = identity
        self.roots = roots
        self.linksOutsideAllowed = linksOutsideAllowed
    }
}

/// The seam between an approval and the lock on the app's directory. The
/// Guard locks before it records an approval, releases after a revoke, and
/// asks it to check and repair at start and on `familyctl locks verify`.
package protocol AppLocker: Sendable {
    /// Locks `directory`, the app directory as identified, for (user, app);
    /// with `linksOutsideAllowed`, files linked outside it too (see
    /// ``ApprovedApp/linksOutsideAllowed``).
    /// - Returns: the report: `locked`, or `unenforced` with the reason the
    ///   app can still change, and what was left alone.
    /// - Throws: when nothing could be locked (the app is left as it was).
    func lock(user: String, appID: String, directory: OpenedDirectory, linksOutsideAllowed: Bool) throws -> LockReport
    /// Releases the lock and restores what was recorded; returns findings
    /// worth logging. Throws when flags are left behind (the record then
    /// stays `unlocking` for ``resume()`` or ``check(_:repair:)`` to finish).
    func unlock(user: String, appID: String, roots: [String]) throws -> [String]
    /// The lock's current state and path, nil when nothing is recorded.
    /// - Throws: when the journal cannot be read: never "nothing recorded".
    func state(user: String, appID: String, roots: [String]) throws -> (state: LockState, path: String)?
    /// Finishes every lock and unlock a crash interrupted.
    /// - Returns: one line per record handled.
    func resume() throws -> [String]
    /// Checks that `app` is locked as recorded; with `repair`, fixes drift
    /// and locks it if it is not locked at all.
    /// - Returns: human-readable findings, empty when the lock was whole.
    func check(_ app: ApprovedApp, repair: Bool) throws -> [String]
    /// Every (user, app) with a lock recorded.
    func lockedApps() throws -> [(user: String, appID: String)]
    /// The (user, app) whose recorded lock, in any state, is on the app
    /// directory `directory`; nil when none is.
    /// - Throws: when the journal cannot be read: never "none".
    func lock(coveringDirectory directory: FileIdentity) throws -> (user: String, appID: String)?
}

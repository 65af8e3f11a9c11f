import SystemKit

/// Turns approved child authorizations into locks on the app's directory, so
/// the child cannot delete, rename, truncate or replace anything in it, and
/// gives the directory back exactly as it was on unlock.
///
/// A lock records every entry's owner, group, mode and immutable flag in the
/// journal first (state `locking`), then sets `FS_IMMUTABLE_FL` on every
/// directory and file (owner and mode stay, so the child still runs its app),
/// then saves state `locked`. Anything that leaves the app changeable (a
/// filesystem without the attribute, an entry of another user, a writer that
/// opened a file before the lock, a link out, a mount inside) gives
/// `unenforced(reason:)`, never `locked`.
///
/// Every walk goes by file descriptor (`openat` with `O_NOFOLLOW`, `fstatat`,
/// `fchownat` with `AT_SYMLINK_NOFOLLOW`) and stays on the app directory's
/// filesystem, so nothing the child swaps in can make root touch a file
/// outside the app. Operations on one app run one at a time (different apps
/// in parallel) and block on the filesystem and the journal: call them from a
/// thread of their own, not the cooperative pool.
package final class LockEngine: Sendable {
    /// How much one lock takes on.
    package struct Limits: Sendable {
        /// Entries one lock records at most; a bigger app directory is refused.
        package var entries = 500_000
        /// Entries that may appear while a lock is applied; past it the lock is unenforced.
        package var lateEntries = 100_000
        /// Late entries journaled in one transaction.
        package var lateBatch = 4096

        package init() {}
    }

    let journal: any LockJournal
    package let logger: Logger
    let hooks: LockEngineHooks
    let limits: Limits
    private let apps = KeyedSerializer<String>()
    /// Held while a lock checks other locks' entries and journals its own, so
    /// two locks of different apps never both take one inode.
    private let claims = KeyedSerializer<Bool>()

    /// - Parameters:
    ///   - journal: where records and entries live; the truth after a crash.
    ///   - logger: one line per lock, unlock, move and repair.
    ///   - hooks: interruption points for tests; `.none` in the Guard.
    ///   - limits: how much one lock takes on.
    package init(journal: any LockJournal, logger: Logger = Logger(label: "lock"), hooks: LockEngineHooks = .none,
                 limits: Limits = Limits()) {
        self.journal = journal
        self.logger = logger
        self.hooks = hooks
        self.limits = limits
    }

    /// Runs `body` while no other operation on (user, app) runs.
    func serialized<Result>(user: String, appID: String, _ body: () throws -> Result) throws -> Result {
        try apps.withExclusiveAccess(to: user + "\u{0}" + appID) { () throws -> Result in try body() }
    }

    /// Runs `body`, which checks ``refuseCovered(_:user:appID:)`` and then
    /// journals entries, while no other lock does the same.
    func claiming<Result>(_ body: () throws -> Result) throws -> Result {
        try claims.withExclusiveAccess(to: true) { () throws -> Result in try body() }
    }

    /// Refuses `entries` of (user, app) when another app's lock, in any state
    /// but unlocked, records one of the same directories or files (device
    /// and inode): a flag two locks share would be cleared by the first
    /// unlock while the other still says locked. Call inside ``claiming(_:)``.
    /// - Throws: ``LockError/coveredByAnotherLock(path:user:appID:)``; journal errors.
    func refuseCovered(_ entries: [LockedEntry], user: String, appID: String) throws {
        if let shared = try sharedEntry(of: entries, user: user, appID: appID) {
            throw LockError.coveredByAnotherLock(path: shared.path, user: shared.user, appID: shared.appID)
        }
    }

    /// The first of `entries` (a directory or regular file) that another
    /// app's lock, in any state but unlocked, also records, and that app.
    func sharedEntry(of entries: [LockedEntry], user: String, appID: String) throws
        -> (path: String, user: String, appID: String)? {
        let others = try journal.allLockRecords().filter { ($0.user != user || $0.appID != appID) && $0.state != .unlocked }
        guard !others.isEmpty else { return nil }
        var mine: [FileIdentity: String] = [:]
        for entry in entries where entry.takesFlag {
            let key = FileIdentity(device: entry.device, inode: entry.inode)
            if mine[key] == nil { mine[key] = entry.relativePath }
        }
        for other in others {
            for entry in try journal.entries(user: other.user, appID: other.appID) where entry.takesFlag {
                if let path = mine[FileIdentity(device: entry.device, inode: entry.inode)] {
                    return (path, other.user, other.appID)
                }
            }
        }
        return nil
    }

    /// "appID of user", for messages.
    static func name(_ record: LockRecord) -> String {
        "\(record.appID) of \(record.user)"
    }
}

import SystemKit

/// The lock state of one (user, app) authorization, as the store records it.
package enum LockState: Hashable, Sendable, CustomStringConvertible {
    /// Nothing is locked (individual approvals, revoked or denied apps).
    case unlocked
    /// Entries are recorded and the lock is being applied; a restart completes it.
    case locking
    /// Every entry is owned by root, read-only, and immutable where the filesystem allows.
    case locked
    /// The lock is being removed; a restart completes the restore.
    case unlocking
    /// The approval stands but the filesystem cannot hold the lock, for `reason`.
    case unenforced(reason: String)

    package var description: String {
        switch self {
        case .unlocked: "unlocked"
        case .locking: "locking"
        case .locked: "locked"
        case .unlocking: "unlocking"
        case .unenforced(let reason): "unenforced: \(reason)"
        }
    }
}

/// The lock on one app directory: where it is, and how far the Guard got.
package struct LockRecord: Hashable, Sendable {
    package var user: String
    package var appID: String
    /// The app directory's path when last seen; refreshed from `device`/`inode`.
    package var path: String
    package var device: UInt64
    package var inode: UInt64
    package var state: LockState

    package init(user: String, appID: String, path: String, device: UInt64, inode: UInt64, state: LockState) {
        self.user = user
        self.appID = appID
        self.path = path
        self.device = device
        self.inode = inode
        self.state = state
    }
}

/// One entry of a locked app directory, with what it was before the lock.
package struct LockedEntry: Hashable, Sendable {
    /// The kind of file, so a restore can tell a swapped entry from the original.
    package enum Kind: Int, Hashable, Sendable {
        case directory = 0, regular = 1, symlink = 2, other = 3
    }

    /// Path relative to the app directory; "" is the app directory itself.
    package var relativePath: String
    package var kind: Kind
    package var device: UInt64
    package var inode: UInt64
    /// Original owner, group and permission bits (`st_mode & 07777`).
    package var uid: UInt32
    package var gid: UInt32
    package var mode: UInt32
    /// Whether `FS_IMMUTABLE_FL` was already set before the Guard touched the entry;
    /// the Guard never clears a flag it did not set.
    package var wasImmutable: Bool

    package init(relativePath: String, kind: Kind, device: UInt64, inode: UInt64,
                 uid: UInt32, gid: UInt32, mode: UInt32, wasImmutable: Bool) {
        self.relativePath = relativePath
        self.kind = kind
        self.device = device
        self.inode = inode
        self.uid = uid
        self.gid = gid
        self.mode = mode
        self.wasImmutable = wasImmutable
    }
}

/// Durable storage for locks: the store is the truth the lock engine consults
/// before it changes anything and after a crash.
///
/// Every method is one durable transaction; when it returns, the data is on disk.
package protocol LockJournal: Sendable {
    func lockRecord(user: String, appID: String) throws -> LockRecord?
    func allLockRecords() throws -> [LockRecord]
    /// Inserts or replaces the record for (`record.user`, `record.appID`).
    func saveLockRecord(_ record: LockRecord) throws
    /// Replaces every recorded entry of (user, app) with `entries`, and saves
    /// `record` in the same transaction.
    func saveEntries(_ entries: [LockedEntry], record: LockRecord) throws
    /// Adds `entries` (replacing any recorded at the same paths) and saves
    /// `record`, in one transaction: entries that appeared late cost a write
    /// of their own rows, not of the whole list.
    func appendEntries(_ entries: [LockedEntry], record: LockRecord) throws
    func entries(user: String, appID: String) throws -> [LockedEntry]
    /// Removes the record and its entries (after a complete unlock).
    func deleteLock(user: String, appID: String) throws
}

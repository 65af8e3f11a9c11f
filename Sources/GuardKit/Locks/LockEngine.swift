import Synchronization
import SystemKit

/// Turns approved child authorizations into file-permission locks, so the
/// child cannot delete, rename, truncate or replace anything in the app's
/// directory, and gives the directory back exactly as it was on unlock.
///
/// A lock records every entry's owner, group, mode and immutable flag in the
/// journal first (state `locking`), then makes each entry root-owned,
/// read-only and `FS_IMMUTABLE_FL`, then saves state `locked`. Only the
/// immutable flag on the app directory stops the child from renaming the
/// directory out of its own (writable) parent, so a filesystem without the
/// flag, or one where root cannot change owners, gives `unenforced(reason:)`,
/// never `locked`.
///
/// Every walk goes by file descriptor (`openat` with `O_NOFOLLOW`, `fstatat`,
/// `fchownat` with `AT_SYMLINK_NOFOLLOW`) and stays on the app directory's
/// filesystem, so nothing the child swaps in can make root touch a file
/// outside the app. Operations are serialized and block on the filesystem
/// and the journal: call them from a thread of their own, not the
/// cooperative pool.
package final class LockEngine: Sendable {
    let journal: any LockJournal
    let logger: Logger
    let hooks: LockEngineHooks
    private let serializer = Mutex(())

    /// - Parameters:
    ///   - journal: where records and entries live; the truth after a crash.
    ///   - logger: one line per lock, unlock, move and repair.
    ///   - hooks: interruption points for tests; `.none` in the Guard.
    package init(journal: any LockJournal, logger: Logger = Logger(label: "lock"), hooks: LockEngineHooks = .none) {
        self.journal = journal
        self.logger = logger
        self.hooks = hooks
    }

    /// Runs `body` while no other operation of this engine runs.
    func serialized<Result: Sendable>(_ body: () throws -> Result) throws -> Result {
        try serializer.withLock { _ in try body() }
    }

    /// "appID of user", for messages.
    static func name(_ record: LockRecord) -> String {
        "\(record.appID) of \(record.user)"
    }
}

import SystemKit

/// Which entries a lock may take over.
struct LockPolicy: Sendable {
    /// The child whose app is locked; nil once the account is gone.
    var childUID: UInt32?

    /// Why an entry must be left alone, or nil when the lock may take it.
    ///
    /// A file with several links, owned by someone other than the child, may
    /// be the same inode as a file outside the app: the child can link any
    /// file it can read and write into its app (with `protected_hardlinks`,
    /// not one it cannot). Locking it would change that outside file, so it is
    /// left as it is; it still cannot be unlinked from its locked directory.
    func refusal(for status: FileStatus) -> String? {
        guard status.type != .directory, status.linkCount > 1, status.uid != childUID else { return nil }
        return "has \(status.linkCount) hard links and belongs to uid \(status.uid), not the child: "
            + "it may be a file outside the app, so it was left unchanged"
    }
}

import SystemKit

/// Which entries a lock may take over: the child's own, and root's.
///
/// An entry that belongs to another user is that user's business: the lock
/// never changes it, and since the child could otherwise use the lock to
/// freeze or keep someone else's file (moved or linked into its app), such an
/// entry makes the lock unenforced instead. A file with several links that is
/// not the child's may be the same inode as a file outside the app (the child
/// can link any file it may read and write into its app), so it is left alone
/// too.
package struct LockPolicy: Sendable {
    /// The child whose app is locked; nil once the account is gone.
    package var childUID: UInt32?

    package init(childUID: UInt32?) { self.childUID = childUID }

    /// Why an entry must be left alone, or nil when the lock may take it.
    package func refusal(for status: FileStatus) -> String? {
        if status.uid == childUID { return nil }
        guard status.uid == 0 else {
            return "belongs to uid \(status.uid), not to the child: the lock does not change another user's files"
        }
        guard status.type != .directory, status.linkCount > 1 else { return nil }
        return "has \(status.linkCount) hard links and belongs to root: it may be a file outside the app, "
            + "so the lock does not change it"
    }
}

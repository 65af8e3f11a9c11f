import SystemKit

/// A file found open for writing during the walk; its writers are named once
/// the walk is over, for every such file at once.
struct HeldOpenFile {
    let path: String
    let file: OpenWriters.File
    /// Where its reason stands in `findings`, and in `unenforcedReasons` when locking.
    let finding: Int
    let reason: Int?
}

extension LockApplier {
    /// Notes a file the kernel says has a writer, to be named by ``nameWriters()``.
    ///
    /// The reason is recorded now, in its place among the others, and only its
    /// wording waits: the lease that found the writer was taken after the file
    /// was made immutable, so the writer opened it before and the file can
    /// still change, whether or not the process can still be named afterwards.
    mutating func noteHeldOpen(path: String, entry: LockedEntry) {
        heldOpen.append(HeldOpenFile(
            path: path, file: OpenWriters.File(device: entry.device, inode: entry.inode),
            finding: findings.count, reason: mode == .lock ? unenforcedReasons.count : nil))
        unenforced(Self.heldOpenReason(path, holders: OpenWriters.unnamed))
    }

    /// Names the writers of every file found open for writing, from one pass
    /// over `/proc` for all of them: a pass per file would make a lock of
    /// many files with writers quadratic.
    mutating func nameWriters() {
        guard !heldOpen.isEmpty else { return }
        let writers = OpenWriters(of: Set(heldOpen.map(\.file)))
        for held in heldOpen {
            let reason = Self.heldOpenReason(held.path, holders: writers.describe(held.file))
            findings[held.finding] = reason
            if let index = held.reason { unenforcedReasons[index] = reason }
        }
        heldOpen = []
    }

    private static func heldOpenReason(_ path: String, holders: String) -> String {
        "\(path): open for writing by \(holders) since before the lock, so it can still change "
            + "(run `familyctl locks verify` once that process has closed it)"
    }
}

/// The outcome of removing a lock.
package struct UnlockReport: Hashable, Sendable {
    /// Where the app directory was when it was unlocked.
    package var path: String
    /// How many entries were given back their recorded owner, mode and flags.
    package var restoredEntries: Int
    /// Entries not restored and why (changed by an administrator, replaced,
    /// missing, unrecorded), one human-readable line each.
    package var findings: [String]
    /// Entries whose immutable flag the lock set and the unlock could not
    /// clear (a lease held them); while any are left the record stays, in
    /// state `unlocking`.
    package var leftImmutable: [String]

    package init(path: String, restoredEntries: Int, findings: [String], leftImmutable: [String] = []) {
        self.path = path
        self.restoredEntries = restoredEntries
        self.findings = findings
        self.leftImmutable = leftImmutable
    }

    /// Whether every flag the lock set is cleared and the record is gone.
    package var isComplete: Bool { leftImmutable.isEmpty }
}

/// The outcome of removing a lock.
package struct UnlockReport: Hashable, Sendable {
    /// Where the app directory was when it was unlocked.
    package var path: String
    /// How many entries were given back their recorded owner, mode and flags.
    package var restoredEntries: Int
    /// Entries not restored and why (changed by an administrator, replaced,
    /// missing, unrecorded), one human-readable line each.
    package var findings: [String]

    package init(path: String, restoredEntries: Int, findings: [String]) {
        self.path = path
        self.restoredEntries = restoredEntries
        self.findings = findings
    }
}

/// What a check of a lock found.
package struct VerifyReport: Hashable, Sendable {
    /// The record after the check (its path refreshed if the directory moved).
    package var record: LockRecord
    /// Every way the tree differs from its locked state, one human-readable line each.
    package var findings: [String]
    /// Whether the engine put the tree back into its locked state.
    package var repaired: Bool

    package init(record: LockRecord, findings: [String], repaired: Bool) {
        self.record = record
        self.findings = findings
        self.repaired = repaired
    }

    /// Whether everything was as the lock left it.
    package var isClean: Bool { findings.isEmpty }
}

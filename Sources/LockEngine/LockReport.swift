/// The outcome of locking an app directory.
package struct LockReport: Hashable, Sendable {
    /// The record as saved: its state is `.locked` or `.unenforced(reason:)`.
    package var record: LockRecord
    /// Entries left alone and why (another filesystem, a shared hard link), one line each.
    package var findings: [String]

    package init(record: LockRecord, findings: [String]) {
        self.record = record
        self.findings = findings
    }

    /// `.locked`, or `.unenforced(reason:)` when the filesystem cannot hold the lock.
    package var state: LockState { record.state }
}

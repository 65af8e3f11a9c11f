import SystemKit

extension LockEngine {
    /// Finishes every lock and unlock a crash interrupted, from the journal:
    /// `locking` records are locked the rest of the way (entries the child
    /// created meanwhile are recorded first), `unlocking` ones restored.
    ///
    /// Called by the Guard's reconcile at start. One record's failure does not
    /// stop the others; it is logged and listed.
    /// - Returns: one line per record handled, saying what was done.
    /// - Throws: journal errors reading the records.
    package func resume() throws -> [String] {
        var done: [String] = []
        for listed in try journal.allLockRecords() where listed.state == .locking || listed.state == .unlocking {
            let name = Self.name(listed)
            do {
                try serialized(user: listed.user, appID: listed.appID) {
                    // Read again under the app's turn: another operation may have finished it.
                    guard var record = try journal.lockRecord(user: listed.user, appID: listed.appID) else { return }
                    switch record.state {
                    case .locking:
                        let report = try completeLock(&record)
                        done.append("finished locking \(name) at '\(record.path)': \(report.state)")
                    case .unlocking:
                        let report = try completeUnlock(&record, candidates: [])
                        done.append(report.isComplete ? "finished unlocking \(name) at '\(report.path)'"
                            : "could not finish unlocking \(name) at '\(report.path)': "
                                + "\(report.leftImmutable.count) entries stay immutable (\(report.leftImmutable.prefix(3).joined(separator: ", ")))")
                    default:
                        return
                    }
                }
            } catch {
                logger.error("could not finish \(listed.state) \(name): \(error)")
                done.append("could not finish \(listed.state) \(name): \(error)")
            }
        }
        return done
    }
}

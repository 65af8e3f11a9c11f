import SystemKit

extension LockEngine {
    /// Removes the lock on `user`'s app `appID`: every recorded entry loses
    /// the immutable flag where the lock set it, and keeps it where it was
    /// set before.
    ///
    /// The journal says `unlocking` before anything changes, so ``resume()``
    /// finishes an interrupted unlock. The record is deleted at the end.
    /// - Parameter candidates: extra directories to search if the app
    ///   directory has moved (see ``locate(user:appID:candidates:)``).
    /// - Returns: what was restored and what was left as it is, and why.
    /// - Throws: ``LockError/notLocked(user:appID:)``,
    ///   ``LockError/directoryMissing(user:appID:lastPath:)``; journal errors.
    package func unlock(user: String, appID: String, candidates: [String] = []) throws -> UnlockReport {
        try serialized(user: user, appID: appID) {
            guard var record = try journal.lockRecord(user: user, appID: appID), record.state != .unlocked else {
                throw LockError.notLocked(user: user, appID: appID)
            }
            if record.state != .unlocking {
                record.state = .unlocking
                try journal.saveLockRecord(record)
            }
            return try completeUnlock(&record, candidates: candidates)
        }
    }

    /// Restores a lock's entries from the journal; safe to repeat.
    func completeUnlock(_ record: inout LockRecord, root: WalkDirectory? = nil, candidates: [String]) throws -> UnlockReport {
        let root = try root ?? openRecorded(&record, candidates: candidates)
        let entries = try journal.entries(user: record.user, appID: record.appID)
        var restorer = LockRestorer(entries: entries, root: root, hooks: hooks)
        if try restorer.begin(with: root) {
            try TreeWalk.walk(from: root, visitor: &restorer)
        }
        let findings = restorer.findings + restorer.missingEntries.map { "\($0): missing; nothing to restore" }
        try journal.deleteLock(user: record.user, appID: record.appID)
        logger.notice("unlocked \(Self.name(record)) at '\(record.path)' (\(restorer.restored) entries restored, "
            + "\(findings.count) left as they were)")
        return UnlockReport(path: record.path, restoredEntries: restorer.restored, findings: findings)
    }
}

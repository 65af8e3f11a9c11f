import SystemKit

extension LockEngine {
    /// Removes the lock on `user`'s app `appID`: every recorded entry loses
    /// the immutable flag where the lock set it, and keeps it where it was
    /// set before.
    ///
    /// The journal says `unlocking` before anything changes, so ``resume()``
    /// finishes an interrupted unlock. The record is deleted at the end, and
    /// only once every flag the lock set is cleared: one a lease kept leaves
    /// it `unlocking`, for ``verify(user:appID:repair:candidates:)`` or
    /// ``resume()`` to finish (``UnlockReport/isComplete``).
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

    /// Restores a lock's entries from the journal; safe to repeat. Deletes
    /// the record only when nothing the lock set is left.
    func completeUnlock(_ record: inout LockRecord, root: WalkDirectory? = nil, candidates: [String]) throws -> UnlockReport {
        let root = try root ?? openRecorded(&record, candidates: candidates)
        let entries = try journal.entries(user: record.user, appID: record.appID)
        var restorer = LockRestorer(entries: entries, root: root, hooks: hooks)
        if try restorer.begin(with: root) {
            try TreeWalk.walk(from: root, visitor: &restorer)
        }
        var findings = restorer.findings + restorer.missingEntries.map { "\($0): missing; nothing to restore" }
        guard restorer.leftImmutable.isEmpty else {
            let left = restorer.leftImmutable
            findings.append("the unlock is not finished: \(left.count) entries stay immutable (\(left.prefix(3).joined(separator: ", "))"
                + "\(left.count > 3 ? ", …" : "")); the lock stays recorded as unlocking until `familyctl locks verify` "
                + "or the next start clears them")
            logger.warning("could not finish unlocking \(Self.name(record)) at '\(record.path)': "
                + "\(left.count) entries stay immutable; the record stays until they are cleared")
            return UnlockReport(path: record.path, restoredEntries: restorer.restored, findings: findings, leftImmutable: left)
        }
        try journal.deleteLock(user: record.user, appID: record.appID)
        logger.notice("unlocked \(Self.name(record)) at '\(record.path)' (\(restorer.restored) entries restored, "
            + "\(findings.count) left as they were)")
        return UnlockReport(path: record.path, restoredEntries: restorer.restored, findings: findings)
    }
}

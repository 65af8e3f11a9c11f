import SystemKit

extension LockEngine {
    /// Locks `directory` for `user`'s app `appID`, or finishes a lock begun earlier.
    ///
    /// Locking an app that is already locked at the same directory changes
    /// nothing. The journal holds every entry's original state before anything
    /// is changed, so a crash at any point leaves work that ``resume()`` finishes.
    /// - Parameters:
    ///   - user: the child's login name.
    ///   - appID: the app's identifier.
    ///   - directory: the app directory's absolute path; no component may be a
    ///     symbolic link (pass a canonical path).
    /// - Returns: the saved record, `.locked` or `.unenforced(reason:)`, and
    ///   what was left alone.
    /// - Throws: ``LockError`` for a bad path or user; journal errors.
    package func lock(user: String, appID: String, directory: String) throws -> LockReport {
        try lock(user: user, appID: appID, directory: OpenedDirectory.open(directory))
    }

    /// Locks the directory `directory`, opened when the app was identified:
    /// the object identified, not whatever its path leads to now.
    ///
    /// A failure after anything changed undoes what the lock did before it
    /// throws, so an error never leaves a half-locked app behind.
    ///
    /// `linksOutsideAllowed` takes files of the child's whose other names lie
    /// outside the directory, which are otherwise refused
    /// (``LockError/linkedOutside(path:links:inside:)``): every file of a
    /// per-user Flatpak deployment is a hard link of its object in the
    /// installation's OSTree repository, the child's own, which the lock then
    /// freezes too. A file another lock covers is still refused.
    /// - Throws: ``LockError/lockedElsewhere(user:appID:path:)`` when the app
    ///   is locked at another directory; ``LockError`` for a tree too deep or
    ///   too big; journal errors.
    package func lock(user: String, appID: String, directory: OpenedDirectory,
                      linksOutsideAllowed: Bool = false) throws -> LockReport {
        try serialized(user: user, appID: appID) {
            try lockNow(user: user, appID: appID, root: directory.walkRoot(), path: directory.path,
                        linksOutsideAllowed: linksOutsideAllowed)
        }
    }

    private func lockNow(user: String, appID: String, root: WalkDirectory, path: String,
                         linksOutsideAllowed: Bool) throws -> LockReport {
        if var record = try journal.lockRecord(user: user, appID: appID) {
            switch record.state {
            case .locked, .locking, .unenforced:
                guard root.status.device == record.device, root.status.inode == record.inode else {
                    throw LockError.lockedElsewhere(user: user, appID: appID, path: record.path)
                }
                if record.path != path {
                    record.path = path
                    try journal.saveLockRecord(record)
                }
                guard record.state != .locked else { return LockReport(record: record, findings: []) }
                return try completeLock(&record, root: root)
            case .unlocking:
                // Recording over flags the last unlock could not clear would
                // take them for an administrator's, and keep them for ever.
                let unlocked = try completeUnlock(&record, candidates: [])
                guard unlocked.isComplete else {
                    throw LockError.unlockUnfinished(user: user, appID: appID, path: record.path, left: unlocked.leftImmutable)
                }
            case .unlocked:
                break
            }
        }
        guard let account = try UserDatabase.user(named: user) else { throw LockError.unknownUser(user) }
        let policy = LockPolicy(childUID: account.uid)
        var record = LockRecord(
            user: user, appID: appID, path: path,
            device: root.status.device, inode: root.status.inode, state: .locking)
        let entries = try claiming { () throws -> [LockedEntry] in
            let entries = try EntryRecorder.record(
                root, device: root.status.device, policy: policy,
                flagsSupported: try Self.supportsFlags(root), limit: limits.entries,
                linksOutsideAllowed: linksOutsideAllowed)
            try refuseCovered(entries, user: user, appID: appID)
            try journal.saveEntries(entries, record: record)
            return entries
        }
        do {
            return try apply(&record, root: root, entries: entries, policy: policy, freshlyRecorded: true)
        } catch let error as LockError {
            // The engine's own refusal (a tree too deep, say): undo. Anything
            // else (the journal failing, a test's simulated crash) is left for
            // ``resume()``, as a crash would be.
            rollBack(&record, root: root, after: error)
            throw error
        }
    }

    /// Undoes a lock that failed part way: the journal says `unlocking`
    /// first, so a crash here still ends with the app unlocked.
    private func rollBack(_ record: inout LockRecord, root: WalkDirectory, after error: LockError) {
        logger.error("could not lock \(Self.name(record)) at '\(record.path)': \(error); undoing what was done")
        do {
            record.state = .unlocking
            try journal.saveLockRecord(record)
            _ = try completeUnlock(&record, root: root, candidates: [])
        } catch {
            logger.error("could not undo the partial lock of \(Self.name(record)): \(error); the next start finishes it")
        }
    }

    /// Brings a recorded lock to its locked state from the journal's entries:
    /// after a crash, to retry an unenforced lock, or to repair drift. The
    /// journal's originals are used, never what the tree looks like now.
    func completeLock(_ record: inout LockRecord, root: WalkDirectory? = nil, candidates: [String] = []) throws -> LockReport {
        let root = try root ?? openRecorded(&record, candidates: candidates)
        if record.state != .locking {
            record.state = .locking
            try journal.saveLockRecord(record)
        }
        let entries = try journal.entries(user: record.user, appID: record.appID)
        let policy = LockPolicy(childUID: try UserDatabase.user(named: record.user)?.uid)
        return try apply(&record, root: root, entries: entries, policy: policy)
    }

    /// Locks every recorded entry. `freshlyRecorded` says the entries were
    /// recorded just now, so their recorded status is still current.
    private func apply(
        _ record: inout LockRecord, root: WalkDirectory, entries: [LockedEntry], policy: LockPolicy,
        freshlyRecorded: Bool = false
    ) throws -> LockReport {
        let locking = record
        let journal = self.journal
        var applier = LockApplier(
            mode: .lock, entries: entries, root: root, policy: policy, hooks: hooks, limits: limits,
            journalLate: { late in
                // A late entry may be a file another lock took meanwhile (a
                // hard link made before that lock froze it).
                try self.claiming {
                    try self.refuseCovered(late, user: locking.user, appID: locking.appID)
                    try journal.appendEntries(late, record: locking)
                }
            },
            journalAll: { all in try journal.saveEntries(all, record: locking) })
        applier.trustsRecordedStatus = freshlyRecorded
        if try applier.begin(with: root) {
            try TreeWalk.walk(from: root, visitor: &applier)
            try applier.finish(root: root)
        }
        try applier.dropMissingEntries()
        if !applier.adopted.isEmpty {
            for position in applier.entries.indices where applier.adopted.contains(applier.entries[position].relativePath) {
                applier.entries[position].wasImmutable = false
            }
            try journal.saveEntries(applier.entries, record: record)
        }
        var reasons = applier.unenforcedReasons
        if !freshlyRecorded, let shared = try sharedEntry(of: applier.entries, user: record.user, appID: record.appID) {
            // Two locks over one inode (journaled before such locks were
            // refused): the other's unlock would free what this one covers.
            let name = shared.path.isEmpty ? "the app directory" : shared.path
            reasons.append("\(name): also locked for \(shared.appID) of \(shared.user), whose unlock would free it; "
                + "revoke one of the two and approve it again")
        }
        if let first = reasons.first {
            let more = reasons.count > 1 ? " (and \(reasons.count - 1) more problems)" : ""
            record.state = .unenforced(reason: first + more)
            logger.warning("\(Self.name(record)) at '\(record.path)' is not enforced: \(first + more)")
        } else {
            record.state = .locked
            logger.notice("locked \(Self.name(record)) at '\(record.path)' (\(applier.entries.count) entries)")
        }
        try journal.saveLockRecord(record)
        return LockReport(record: record, findings: applier.findings)
    }

    /// Whether the app directory's filesystem has inode flags at all.
    static func supportsFlags(_ root: WalkDirectory) throws(LockError) -> Bool {
        do {
            _ = try root.descriptor.flags()
            return true
        } catch where error.meansFlagsUnsupported {
            return false
        } catch {
            throw .system(path: "", error)
        }
    }
}

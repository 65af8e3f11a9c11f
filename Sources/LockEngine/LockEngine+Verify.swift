import SystemKit

extension LockEngine {
    /// Checks that every recorded entry of `user`'s app `appID` is still
    /// immutable and unchanged, that nothing can still write to it, and looks
    /// for entries the lock never recorded.
    ///
    /// - Parameters:
    ///   - repair: put everything back into its locked state (recording new
    ///     entries first), and finish an interrupted lock or unlock.
    ///   - candidates: extra directories to search if the app directory moved.
    /// - Returns: one finding per difference; empty when the lock is intact.
    /// - Throws: ``LockError/notLocked(user:appID:)``,
    ///   ``LockError/directoryMissing(user:appID:lastPath:)``; journal errors.
    package func verify(user: String, appID: String, repair: Bool, candidates: [String] = []) throws -> VerifyReport {
        try serialized(user: user, appID: appID) {
            guard var record = try journal.lockRecord(user: user, appID: appID), record.state != .unlocked else {
                throw LockError.notLocked(user: user, appID: appID)
            }
            switch record.state {
            case .locking, .unlocking:
                let findings = ["the lock is incomplete (\(record.state)); resuming finishes it"]
                guard repair else { return VerifyReport(record: record, findings: findings, repaired: false) }
                if record.state == .locking {
                    _ = try completeLock(&record, candidates: candidates)
                } else {
                    let unlocked = try completeUnlock(&record, candidates: candidates)
                    guard unlocked.isComplete else {
                        return VerifyReport(record: record, findings: findings + unlocked.findings, repaired: false)
                    }
                    record.state = .unlocked
                }
                return VerifyReport(record: record, findings: findings, repaired: true)
            default:
                return try inspect(&record, repair: repair, candidates: candidates)
            }
        }
    }

    private func inspect(_ record: inout LockRecord, repair: Bool, candidates: [String]) throws -> VerifyReport {
        let root = try openRecorded(&record, candidates: candidates)
        var entries = try journal.entries(user: record.user, appID: record.appID)
        let policy = LockPolicy(childUID: try UserDatabase.user(named: record.user)?.uid)
        var inspector = LockApplier(mode: .inspect, entries: entries, root: root, policy: policy, hooks: hooks, limits: limits)
        if try inspector.begin(with: root) {
            try TreeWalk.walk(from: root, visitor: &inspector)
            try inspector.finish(root: root)
        }
        let missing = inspector.missingEntries
        var findings = inspector.findings + missing.map { "\($0): missing" }
        if case .unenforced(let reason) = record.state {
            findings.insert("the lock is not enforced: \(reason)", at: 0)
        } else if let shared = try sharedEntry(of: entries, user: record.user, appID: record.appID) {
            findings.append("\(shared.path.isEmpty ? "the app directory" : shared.path): also locked for "
                + "\(shared.appID) of \(shared.user), whose unlock would free it")
        }
        guard repair, !findings.isEmpty else {
            return VerifyReport(record: record, findings: findings, repaired: false)
        }
        if !missing.isEmpty {
            // Nothing can bring them back; the journal should list what is there.
            let gone = Set(missing)
            entries.removeAll { gone.contains($0.relativePath) }
            try journal.saveEntries(entries, record: record)
        }
        let report = try completeLock(&record, root: root)
        logger.notice("repaired the lock of \(Self.name(record)) at '\(record.path)': \(findings.count) findings")
        return VerifyReport(record: report.record, findings: findings, repaired: true)
    }
}

import SystemKit
import LockEngine

/// The Guard's ``AppLocker``: the lock engine, journaling into the store.
package struct LockEngineLocker: AppLocker {
    let engine: LockEngine
    let journal: any LockJournal

    package init(journal: any LockJournal, logger: Logger) {
        self.journal = journal
        engine = LockEngine(journal: journal, logger: Logger(label: "lock", minimumLevel: logger.minimumLevel))
    }

    package func lock(user: String, appID: String, directory: OpenedDirectory, linksOutsideAllowed: Bool) throws -> LockReport {
        let report = try engine.lock(user: user, appID: appID, directory: directory, linksOutsideAllowed: linksOutsideAllowed)
        for finding in report.findings { engine.logger.notice("\(appID) for \(user): \(finding)") }
        return report
    }

    package func unlock(user: String, appID: String, roots: [String]) throws -> [String] {
        let report = try engine.unlock(user: user, appID: appID, candidates: roots)
        guard report.isComplete else {
            for finding in report.findings { engine.logger.notice("\(appID) for \(user): \(finding)") }
            throw LockError.unlockUnfinished(user: user, appID: appID, path: report.path, left: report.leftImmutable)
        }
        return report.findings
    }

    package func state(user: String, appID: String, roots: [String]) throws -> (state: LockState, path: String)? {
        guard let record = try engine.status(user: user, appID: appID, candidates: roots) else { return nil }
        return (record.state, record.path)
    }

    package func resume() throws -> [String] {
        try engine.resume()
    }

    package func lockedApps() throws -> [(user: String, appID: String)] {
        try journal.allLockRecords().map { ($0.user, $0.appID) }
    }

    package func lock(coveringDirectory directory: FileIdentity) throws -> (user: String, appID: String)? {
        try journal.allLockRecords()
            .first { $0.state != .unlocked && $0.device == directory.device && $0.inode == directory.inode }
            .map { ($0.user, $0.appID) }
    }

    /// One approved app: locked as recorded, or locked now when repairing.
    package func check(_ app: ApprovedApp, repair: Bool) throws -> [String] {
        let label = "\(app.appID) for \(app.user)"
        guard let record = try journal.lockRecord(user: app.user, appID: app.appID), record.state != .unlocked else {
            guard repair else { return ["\(label) is approved but not locked"] }
            let directory = try approvedDirectory(app)
            let report = try lock(user: app.user, appID: app.appID, directory: directory,
                                  linksOutsideAllowed: app.linksOutsideAllowed)
            return ["\(label) was approved but not locked; now \(report.state)"]
        }
        let report = try engine.verify(user: app.user, appID: app.appID, repair: repair, candidates: app.roots)
        return report.findings.map { "\(label): \($0)\(report.repaired ? " (repaired)" : "")" }
    }

    /// The directory that was approved: at its recorded path if it is still
    /// the same object there, else found again by device and inode.
    private func approvedDirectory(_ app: ApprovedApp) throws -> OpenedDirectory {
        guard let identity = app.identity else { return try OpenedDirectory.open(app.directory) }
        return try OpenedDirectory.find(identity, lastSeenAt: app.directory, under: app.roots, user: app.user, appID: app.appID)
    }
}

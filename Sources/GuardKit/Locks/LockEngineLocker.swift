import SystemKit

/// The Guard's ``AppLocker``: the lock engine, journaling into the store.
package struct LockEngineLocker: AppLocker {
    let engine: LockEngine
    let journal: any LockJournal

    package init(journal: any LockJournal, logger: Logger) {
        self.journal = journal
        engine = LockEngine(journal: journal, logger: Logger(label: "lock", minimumLevel: logger.minimumLevel))
    }

    package func lock(user: String, appID: String, directory: String) throws -> LockState {
        let report = try engine.lock(user: user, appID: appID, directory: directory)
        for finding in report.findings { engine.logger.notice("\(appID) for \(user): \(finding)") }
        return report.state
    }

    package func unlock(user: String, appID: String, roots: [String]) throws -> [String] {
        try engine.unlock(user: user, appID: appID, candidates: roots).findings
    }

    package func state(user: String, appID: String, roots: [String]) -> (state: LockState, path: String)? {
        guard let record = try? engine.status(user: user, appID: appID, candidates: roots) else { return nil }
        return (record.state, record.path)
    }

    package func verify(approved: [ApprovedApp], repair: Bool) throws -> [String] {
        var findings = repair ? try engine.resume() : []
        let wanted = Set(approved.map { "\($0.user)\u{0}\($0.appID)" })
        for app in approved {
            let label = "\(app.appID) for \(app.user)"
            guard let record = try journal.lockRecord(user: app.user, appID: app.appID), record.state != .unlocked else {
                guard repair else {
                    findings.append("\(label) is approved but not locked")
                    continue
                }
                let state = try lock(user: app.user, appID: app.appID, directory: app.directory)
                findings.append("\(label) was approved but not locked; now \(state)")
                continue
            }
            if case .unenforced = record.state { continue }
            let report = try engine.verify(user: app.user, appID: app.appID, repair: repair, candidates: app.roots)
            findings += report.findings.map { "\(label): \($0)\(report.repaired ? " (repaired)" : "")" }
        }
        for record in try journal.allLockRecords() where !wanted.contains("\(record.user)\u{0}\(record.appID)") {
            let label = "\(record.appID) for \(record.user)"
            guard repair else {
                findings.append("\(label) is locked without an approval")
                continue
            }
            let report = try engine.unlock(user: record.user, appID: record.appID)
            findings.append("\(label) was locked without an approval; released at '\(report.path)'")
        }
        return findings
    }
}

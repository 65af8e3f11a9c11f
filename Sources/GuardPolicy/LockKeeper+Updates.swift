#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit
import UpdateSignature
import GuardIdentity
import GuardStore

// An update of an approved app in an app root: the staged version is locked
// first (journaled under its own key), verified or approved, then swapped in
// by one rename; the records follow in one transaction, and the old version
// is released. The rename is the step that decides: a Guard killed before it
// finds the old version in place and releases the staged one; killed after
// it, finds the new version in place and finishes the records.
extension LockKeeper {
    /// Locks the staged version under its own key and marks the update as
    /// under way, so no check releases the lock while it is verified or
    /// waits for a guardian. Call in the app's save turn.
    /// - Throws: ``GuardFailure`` (`invalidArgument`) when it cannot be
    ///   locked whole, a writer still holding a file open for one (nothing
    ///   is left locked then).
    func lockStaged(_ update: StagedUpdate, user: String) throws(GuardFailure) {
        let key = StatusHub.Key(user: user, appID: update.lockKey)
        updatesUnderWay.withLock { _ = $0.insert(key) }
        let report: LockReport
        do {
            report = try locker.lock(user: user, appID: update.lockKey, directory: update.staged, linksOutsideAllowed: false)
        } catch {
            updatesUnderWay.withLock { _ = $0.remove(key) }
            ledger.audit(.update, actor: user, user: user, appID: update.appID, member: .child, outcome: .refused,
                         detail: "the staged version cannot be locked: \(error)")
            throw GuardFailure(.invalidArgument, "the staged version of \(update.appID) cannot be locked, so it cannot "
                + "be swapped in: \(error); nothing was changed")
        }
        guard report.state == .locked else {
            releaseStaged(update, user: user, actor: user)
            ledger.audit(.update, actor: user, user: user, appID: update.appID, member: .child, outcome: .refused,
                         detail: "the staged version cannot be locked whole: \(report.state)")
            throw GuardFailure(.invalidArgument, "the staged version of \(update.appID) cannot be locked whole "
                + "(\(report.state)); finish writing it, close it, and ask again; nothing was swapped")
        }
        UpdatePause.at("after-lock", logger: logger)
    }

    /// Releases the staged version back to the child and ends the update.
    func releaseStaged(_ update: StagedUpdate, user: String, actor: String) {
        release(user: user, appID: update.lockKey, actor: actor)
        updatesUnderWay.withLock { _ = $0.remove(StatusHub.Key(user: user, appID: update.lockKey)) }
    }

    /// Swaps the locked, verified (or approved) staged version in, records
    /// it, and releases the old version, left at the staged name for the
    /// child. Call in the app's save turn.
    /// - Parameters:
    ///   - actor: who let it in (the child for a signed update, else the guardian).
    ///   - detail: how, for the audit row ("signed …", "approved by …").
    ///   - key: the update key the approval trusts from now on.
    ///   - version: the new version's comparable version, which becomes the
    ///     highest the approval has had when it is higher.
    /// - Throws: ``GuardFailure`` when the approval changed meanwhile, the
    ///   folders moved, or the rename failed: the old version stays.
    func swapIn(_ update: StagedUpdate, user: String, actor: String, detail: String,
                trusting key: UpdateKey?, version: String?) throws(GuardFailure) {
        guard let current = try ledger.authorization(user: user, appID: update.appID), current.member == .child,
              current.status == .approved, current.appIdentity == update.approved.identity else {
            throw GuardFailure(.authorizationConflict, "the approval of \(update.appID) changed while the update was "
                + "under way; nothing was swapped")
        }
        UpdatePause.at("before-exchange", logger: logger)
        try update.exchange(logger: logger)
        do throws(GuardFailure) {
            try update.checkNames(swapped: true)
        } catch {
            // The child put another folder at the app's name in the moment the
            // top folders could be renamed: swap back, the new version out of place.
            try? update.parent.exchange(update.appID, update.lockKey)
            throw error
        }
        UpdatePause.at("after-exchange", logger: logger)
        var record = current
        record.appIdentity = update.staged.identity
        record.appPath = update.appPath
        record.updateKey = key
        record.highestVersion = UpdateVersion.highest(current.highestVersion, version)
        record.updatedAt = .now
        let event = ledger.event(.update, actor: actor, user: user, appID: update.appID, member: .child,
                                 outcome: .swappedIn, detail: detail)
        do throws(StoreError) {
            try ledger.store.recordUpdateSwapped(user: user, appID: update.appID, stagedKey: update.lockKey,
                                                 appPath: update.appPath, stagedPath: update.stagedPath,
                                                 authorization: record, audit: event)
        } catch {
            logger.error("store: cannot record the update of \(update.appID) for \(user): \(error); swapping back")
            do throws(Errno) {
                try update.parent.exchange(update.appID, update.lockKey)
            } catch {
                logger.error("update: cannot swap \(update.appID) for \(user) back (\(error)); the next start finishes it")
            }
            throw .internalError("the Guard could not record the update in its store; see its log")
        }
        logger.notice("update: \(update.appID) for \(user) swapped in (\(detail))")
        AuditForwarder.send(event, id: nil)
        UpdatePause.at("after-record", logger: logger)
        releaseStaged(update, user: user, actor: actor)
    }

    /// At start (and on `familyctl locks verify`): finishes every update whose
    /// rename happened but whose records were not written, so the approval
    /// and the lock follow the folder now at the app's path. An update whose
    /// rename did not happen needs nothing here: its staged lock, which no
    /// approval covers, is released with the others.
    /// - Returns: one line per update finished.
    func finishSwappedUpdates() throws(GuardFailure) -> [String] {
        let locked: [(user: String, appID: String)]
        do {
            locked = try locker.lockedApps()
        } catch {
            logger.error("locks: cannot read the lock journal: \(error)")
            throw .internalError("the Guard could not read its lock journal; see its log")
        }
        var findings: [String] = []
        for (user, key) in locked where key.hasPrefix(".") && key.hasSuffix(".update") {
            let appID = String(key.dropFirst().dropLast(".update".count))
            guard !updatesUnderWay.withLock({ $0.contains(StatusHub.Key(user: user, appID: key)) }) else { continue }
            findings += try turns.save(StatusHub.Key(user: user, appID: appID)) { () throws(GuardFailure) -> [String] in
                do throws(StoreError) {
                    guard let current = try ledger.store.authorization(user: user, appID: appID),
                          current.member == .child, current.status == .approved,
                          let stagedLock = try ledger.store.lockRecord(user: user, appID: key),
                          let appLock = try ledger.store.lockRecord(user: user, appID: appID),
                          FileIdentity(device: appLock.device, inode: appLock.inode) == current.appIdentity else { return [] }
                    let newIdentity = FileIdentity(device: stagedLock.device, inode: stagedLock.inode)
                    let parentPath = StagedUpdate.parent(of: current.appPath)
                    guard let parent = try? OpenedDirectory.open(parentPath),
                          let there = try? parent.status(ofChild: appID), FileIdentity(there) == newIdentity else { return [] }
                    var record = current
                    record.appIdentity = newIdentity
                    // The version in place was let in (signed and newer, or by a guardian): the highest now.
                    // A key a guardian let in is not known here; the recorded one stays, so a change asks again.
                    record.highestVersion = UpdateVersion.highest(current.highestVersion,
                                                                  Self.installedVersion(appID, in: parent, identity: newIdentity))
                    record.updatedAt = .now
                    let detail = "the rename was done before the Guard stopped; its records are finished at start"
                    try ledger.store.recordUpdateSwapped(
                        user: user, appID: appID, stagedKey: key, appPath: current.appPath,
                        stagedPath: StagedUpdate.join(parentPath, key), authorization: record,
                        audit: ledger.event(.update, actor: AuditEvent.guardActor, user: user, appID: appID,
                                            member: .child, outcome: .swappedIn, detail: detail))
                    logger.notice("update: \(appID) for \(user): \(detail)")
                    return ["\(appID) for \(user): the update swapped in before a restart is recorded; the old version is released"]
                } catch {
                    logger.error("store: cannot finish the update of \(appID) for \(user): \(error)")
                    return ["\(appID) for \(user): an update swapped in before a restart could not be recorded: \(error)"]
                }
            }
        }
        return findings
    }
}

extension LockKeeper {
    /// The comparable version the folder `appID` in `parent`, if it is still
    /// `identity`, declares; nil when it cannot be read.
    fileprivate static func installedVersion(_ appID: String, in parent: OpenedDirectory, identity: FileIdentity) -> String? {
        guard let folder = try? parent.openDirectory(appID), folder.identity == identity,
              let descriptor = try? folder.reopened() else { return nil }
        defer { descriptor.close() }
        return UpdateAuthenticity.declaredVersion(appID: appID, of: descriptor)
    }
}

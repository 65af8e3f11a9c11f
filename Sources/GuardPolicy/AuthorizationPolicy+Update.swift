import AuthorizationRules
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit
import UpdateSignature
import GuardIdentity

extension AuthorizationPolicy {
    /// How an update was let in.
    package enum UpdateOutcome: Sendable, Equatable {
        /// Signed by a key the approval trusts, and newer.
        case signed
        /// Approved by a parent or guardian from their own session.
        case approved
    }

    /// `UpdateApp`: swaps in the version `caller`, an approved child app,
    /// staged beside its folder (``StagedUpdate``). Runs on the calling
    /// thread, one of the Guard's own (an unsigned update waits for a person).
    ///
    /// The staged version is locked first, so what is checked is what is
    /// swapped in; an update that drops the capability or changes the app ID
    /// is refused outright; one signed by a key the approval trusts (shown
    /// to a guardian, or configured), declaring a trusted key and newer than
    /// every version the approval has had, is swapped in at once; any other
    /// becomes an `update` request a parent or guardian decides
    /// (``GuardianDesk``), shown a change of key. Whatever refuses it releases the
    /// staged version back to the child, unchanged.
    /// - Throws: ``GuardFailure``, as the app hears it.
    package func update(from caller: Caller, over channel: any RequestChannel) throws(GuardFailure) -> UpdateOutcome {
        try checkQuota(.update, .child, caller: caller)
        let ended = try turns.request(caller.key, until: turnDeadline, unless: channel.hangUp, onWait: {
            logger.info("update: \(caller.app.appID) for \(caller.account.name) waits for the request open for it to end")
        }) { () throws(GuardFailure) -> UpdateOutcome in
            try AppUpdate(policy: self, caller: caller, channel: channel).run()
        }
        guard let ended else { throw gaveUpWaiting(.update, .child, caller: caller, channel: channel) }
        return ended
    }
}

/// One app's update, from its request to the swap or the release, read top to bottom in ``run()``.
private struct AppUpdate {
    let policy: AuthorizationPolicy
    let caller: Caller
    let channel: any RequestChannel

    var user: String { caller.account.name }
    var appID: String { caller.app.appID }
    var keeper: LockKeeper { policy.keeper }

    func run() throws(GuardFailure) -> AuthorizationPolicy.UpdateOutcome {
        guard let record = try policy.ledger.authorization(user: user, appID: appID), record.member == .child,
              record.status == .approved, record.appIdentity == caller.app.directoryIdentity else {
            policy.ledger.audit(.update, actor: user, user: user, appID: appID, member: .child, outcome: .refused,
                                detail: "not an approved child app in this folder")
            throw GuardFailure(.restricted, "only a child's approved app, run from its approved folder, can be updated; "
                + "request authorization first")
        }
        let update = try StagedUpdate.open(appID: appID, approved: caller.directory, path: caller.app.directory,
                                           user: caller.account)
        try policy.turns.save(caller.key) { () throws(GuardFailure) in try keeper.lockStaged(update, user: user) }
        // From here the staged version is locked: every way out but a swap releases it.
        do throws(GuardFailure) {
            let trust = UpdateAuthenticity.Trust(
                recorded: record.updateKey, configured: policy.family.configuration.trustedUpdateKeys(for: appID),
                highestVersion: record.highestVersion)
            return try decide(update, trust: trust)
        } catch {
            policy.turns.save(caller.key) { keeper.releaseStaged(update, user: user, actor: user) }
            throw error
        }
    }

    /// Checks the locked staged version, then swaps it in: at once when a
    /// key the approval trusts signed it (``UpdateAuthenticity/verify``),
    /// else once a guardian, shown what changes, approves it.
    private func decide(_ update: StagedUpdate, trust: UpdateAuthenticity.Trust)
        throws(GuardFailure) -> AuthorizationPolicy.UpdateOutcome {
        let approvedFolder: FileDescriptor
        let stagedFolder: FileDescriptor
        do throws(Errno) {
            approvedFolder = try update.approved.reopened()
            stagedFolder = try update.staged.reopened()
        } catch {
            throw GuardFailure(.unavailable, "the folders of \(appID) cannot be read: \(error)")
        }
        defer {
            approvedFolder.close()
            stagedFolder.close()
        }
        let entry: DesktopEntry
        do throws(UpdateRefusal) {
            entry = try UpdateAuthenticity.checkKept(appID: appID, staged: stagedFolder)
        } catch {
            refuse("\(error)")
            throw GuardFailure(.restricted, "the update of \(appID) is refused: \(error); nothing was swapped")
        }
        // A version its manifest cannot describe (too many entries, too deep,
        // a name or file kind a version may not hold) no one can vouch for.
        do throws(UpdateSignatureError) {
            _ = try UpdateManifest.compute(of: stagedFolder)
        } catch {
            refuse("the staged version cannot be read as a version: \(error)")
            throw GuardFailure(.restricted, "the update of \(appID) is refused: the staged version cannot be read as a "
                + "version: \(error); nothing was swapped")
        }
        let unsigned: UpdateRefusal?
        do throws(UpdateRefusal) {
            _ = try UpdateAuthenticity.verify(appID: appID, staged: stagedFolder, entry: entry, trust: trust)
            unsigned = nil
        } catch {
            unsigned = error
        }
        let version = entry.comparableVersion
        guard let unsigned else {
            // Signed by a trusted key and declaring one: the recorded key stays; the version is the highest now.
            try policy.turns.save(caller.key) { () throws(GuardFailure) in
                try keeper.swapIn(update, user: user, actor: user, detail: "signed by a key the approval trusts, "
                                    + "version \(version ?? "?") after \(trust.highestVersion ?? "none")",
                                  trusting: trust.recorded, version: version)
            }
            return .signed
        }
        policy.logger.info("update: \(appID) for \(user) needs a parent or guardian: \(unsigned)")
        var pending = PendingRequest.Update(
            change: .staged(update), from: UpdateAuthenticity.describe(appID: appID, version: approvedFolder),
            to: UpdateAuthenticity.describe(appID: appID, version: stagedFolder),
            nextKey: entry.updateKey, version: version)
        // What a guardian's yes makes the approval trust next: the key this version declares, shown when it changes.
        if entry.updateKey != trust.recorded {
            pending.keyChange = .init(from: trust.recorded, to: entry.updateKey)
        }
        if case .notNewer = unsigned { pending.note = "signed, but \(unsigned)" }
        let (outcome, timeout) = try policy.desk.awaitGuardian(.update, caller: caller, update: pending, channel: channel)
        // Approved: the guardian's own call swapped it in (``AuthorizationPolicy/decide``).
        try outcome.letIn(timeout: timeout) { guardian in
            GuardFailure(.restricted, "\(guardian) did not let the new version of \(caller.app.displayName) in; "
                + "the approved version stays")
        }
        return .approved
    }

    private func refuse(_ reason: String) {
        policy.ledger.audit(.update, actor: user, user: user, appID: appID, member: .child, outcome: .refused, detail: reason)
        policy.logger.notice("update: \(appID) for \(user) refused: \(reason)")
    }
}

extension PendingRequest.Outcome {
    /// How an `update` request's ending reaches the app: returns when a
    /// guardian let the new version in; otherwise throws, `refused` wording
    /// a guardian's no.
    func letIn(timeout: Duration, refused: (String) -> GuardFailure) throws(GuardFailure) {
        switch self {
        case .approved: return
        case .denied(let guardian): throw refused(guardian)
        case .failed(let failure): throw failure
        case .canceled: throw AuthorizationRules.ended(timedOut: false)
        case .expired: throw AuthorizationRules.expired(after: timeout.spokenSeconds)
        }
    }
}

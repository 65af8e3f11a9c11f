import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit

extension AuthorizationPolicy {
    /// Refuses a child's request for a folder that already waits, is
    /// approved, or is locked under another app ID of the same child: one
    /// folder renamed from `ROOT/X` to `ROOT/Y` is still one folder, and two
    /// approvals over it would let lifting either free what the other still
    /// calls locked. The lock engine refuses the same at lock time, so a
    /// request that slips past this check is still never approved twice.
    /// - Throws: ``GuardFailure`` (`authorizationConflict`) naming the other app.
    func refuseFolderOfAnotherApp(_ caller: Caller) throws(GuardFailure) {
        let user = caller.account.name
        let appID = caller.app.appID
        let folder = caller.app.directoryIdentity
        var other: (appID: String, how: String)?
        if let waiting = desk.pending.waiting(onFolderOf: caller) {
            other = (waiting.appID, "waits for a parent or guardian (request \(waiting.id))")
        } else if let approved = try ledger.authorizations(user: user).first(where: {
            $0.appID != appID && $0.member == .child && $0.status == .approved && $0.appIdentity == folder
        }) {
            other = (approved.appID, "is approved")
        } else {
            let holder: (user: String, appID: String)?
            do {
                holder = try keeper.locker.lock(coveringDirectory: folder)
            } catch {
                logger.error("store: cannot read the lock journal: \(error)")
                throw .internalError("the Guard could not read its lock journal; see its log")
            }
            if let holder, holder.user != user || holder.appID != appID {
                other = (holder.appID, "is locked")
            }
        }
        guard let other else { return }
        let shown = DisplayText.sanitized(other.appID)
        if auditRefusal(.child, caller: caller, detail: "its folder \(other.how) as \(other.appID)") {
            logger.notice("request: \(appID) for \(user) refused: its folder \(other.how) as \(shown)")
        }
        throw GuardFailure(.authorizationConflict,
            "this app's folder (\(DisplayText.sanitized(caller.app.directory))) \(other.how) as \(shown); "
            + "one folder is approved for one app only: a parent or guardian must decide or revoke \(shown) first")
    }
}

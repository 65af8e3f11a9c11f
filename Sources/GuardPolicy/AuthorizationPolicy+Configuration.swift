import FamilyConfiguration
import GuardProtocol
import SystemKit
import GuardStore

extension AuthorizationPolicy {
    /// Revokes (and unlocks) every approval the configuration made
    /// (`ApprovedApps=`) that no file gives any more: the line removed, the
    /// drop-in deleted, or the child no longer in that family. Run at start,
    /// on reload and at each periodic check. A child NSS cannot look up or
    /// does not know now, or whose family's group cannot be found, keeps the
    /// approval (a directory server down is not a change of mind).
    func revokeWhatTheConfigurationNoLongerApproves() {
        let records: [AuthorizationRecord]
        do throws(GuardFailure) {
            records = try ledger.authorizations()
        } catch {
            logger.error("cannot check the approvals the configuration made: \(error.message)")
            return
        }
        let family = self.family
        // A family's group not found now is no proof that its children left it.
        guard family.everyChildGroupResolves() else {
            logger.warning("a group named in Children= cannot be found now; approvals made by the configuration stay")
            return
        }
        for record in records where record.status == .approved && ConfiguredApproval.isConfiguration(record.approvedBy) {
            let stillApproved: Bool
            do throws(Errno) {
                // An account NSS does not know now keeps it: deleted, or a directory down.
                guard let account = try UserDatabase.user(named: record.user), account.uid == record.uid else { continue }
                stillApproved = try family.configuredApproval(of: record.appID, for: account) != nil
            } catch {
                logger.warning("cannot look up \(record.user) (\(error)); the approval of \(record.appID) the "
                    + "configuration made stays until they can be")
                continue
            }
            if !stillApproved {
                revokeConfigured(record, because: "no longer approved by the configuration")
            }
        }
    }

    private func revokeConfigured(_ record: AuthorizationRecord, because reason: String) {
        do throws(GuardFailure) {
            try turns.save(StatusHub.Key(user: record.user, appID: record.appID)) { () throws(GuardFailure) in
                try revoke(user: record.user, appID: record.appID, actor: "configuration", detail: reason)
            }
        } catch {
            logger.error("cannot revoke \(record.appID) for \(record.user) (\(reason)): \(error.message)")
        }
    }
}

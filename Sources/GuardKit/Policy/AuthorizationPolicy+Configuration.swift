import FamilyConfiguration
import GuardProtocol
import SystemKit

extension AuthorizationPolicy {
    /// Revokes (and unlocks) every approval the configuration made
    /// (`ApprovedApps=`) that no file gives any more: the line removed, the
    /// drop-in deleted, or the child no longer in that family. Run at start
    /// and on reload. A child NSS cannot look up now keeps the approval
    /// until it can (a directory server down is not a change of mind).
    func revokeWhatTheConfigurationNoLongerApproves() {
        let records: [AuthorizationRecord]
        do throws(GuardFailure) {
            records = try ledger.authorizations()
        } catch {
            logger.error("cannot check the approvals the configuration made: \(error.message)")
            return
        }
        let family = self.family
        for record in records where record.status == .approved && ConfiguredApproval.isConfiguration(record.approvedBy) {
            let stillApproved: Bool
            do throws(Errno) {
                if let account = try UserDatabase.user(named: record.user), account.uid == record.uid {
                    stillApproved = try family.configuredApproval(of: record.appID, for: account) != nil
                } else {
                    stillApproved = false
                }
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

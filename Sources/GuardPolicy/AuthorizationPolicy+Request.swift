import AuthorizationRules
import FamilyControlsModel
import GuardProtocol
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import FamilyConfiguration
import PAM
import GuardStore

extension AuthorizationPolicy {
    /// `requestAuthorization(for:)`: runs the whole flow on the calling thread,
    /// which must be one of the Guard's own (it blocks on people and on PAM).
    ///
    /// A child's request shows the alert in the app, then waits for a parent
    /// or guardian to decide it from their own session (``GuardianDesk``):
    /// nothing secret passes through the child's app. With `InSessionApproval=yes`
    /// the guardian may authenticate in the app instead, as an individual
    /// always does for themself. Requests for one app run one at a time; a
    /// second finds the first one's outcome, waiting for it until
    /// ``turnDeadline`` and only while its app is there. In-session sheets open one per
    /// user at a time, whatever the app (``AuthenticationSheet``). The decision is
    /// saved under the short (user, app) save turn only (``AppTurns``), so an
    /// administrator's `familyctl set` never waits for a person; the later
    /// decision stands. The steps are ``AppRequest``'s.
    /// - Returns: the status after the request (always `approved` on success).
    /// - Throws: ``GuardFailure`` with the FamilyControlsError case to report.
    package func request(_ member: FamilyControlsMember, from caller: Caller,
                         over channel: any RequestChannel) throws(GuardFailure) -> AuthorizationStatus {
        try AppRequest(policy: self, purpose: .request(member), caller: caller, channel: channel).run()
    }

    /// Refuses at once, before any conversation, a request `caller` may not
    /// make as `member`: a child request from someone who is not a child in
    /// the family, or an individual one from a child.
    package func admit(_ member: FamilyControlsMember, from caller: Caller) throws(GuardFailure) {
        let user = caller.account.name
        let isChild: Bool
        do throws(Errno) {
            isChild = try family.isChild(caller.account)
        } catch {
            logger.error("cannot resolve family membership of \(user): \(error)")
            throw GuardFailure(.networkError, "the user directory could not be reached to check the family")
        }
        let asking = AskingApp(user: user, appID: caller.app.appID, displayName: caller.app.displayName)
        guard let refusal = AuthorizationRules.admission(member, isChild: isChild, app: asking) else { return }
        auditRefusal(member, caller: caller, detail: isChild ? "a child cannot authorize as an individual"
                                                             : "not a child in the family")
        throw refusal
    }

    /// Audits `caller`'s request refused at once, before it started
    /// (`detail` says why), while the user's quota of requests lasts: each
    /// refusal counts as a request, since a user with many app folders (or
    /// one folder renamed from app ID to app ID) would otherwise write a row
    /// per call, none of them a repeat of the one before. Past the quota the
    /// refusal still stands, unrecorded; the first one past it says so.
    /// - Returns: whether the refusal itself was recorded (and is worth a log line).
    @discardableResult
    func auditRefusal(_ member: FamilyControlsMember, caller: Caller, detail: String) -> Bool {
        auditRefusal(of: caller.account.name, appID: caller.app.appID, member: member, outcome: .refused, detail: detail)
    }

    /// Audits a call of `user`'s that could not be told from any app's
    /// because the inspector failed on what their files hold (a file made
    /// to hang or crash it, say): a failed request of no app, under the
    /// same quota.
    package func auditInspectorFailure(of user: String, detail: String) {
        auditRefusal(of: user, appID: nil, member: nil, outcome: .failed, detail: detail)
    }

    @discardableResult
    private func auditRefusal(of user: String, appID: String?, member: FamilyControlsMember?, outcome: AuditOutcome,
                              detail: String) -> Bool {
        guard let (wait, first) = quota.take(for: user) else {
            ledger.audit(.request, actor: user, user: user, appID: appID, member: member, outcome: outcome, detail: detail)
            return true
        }
        guard first else { return false }
        ledger.audit(.request, actor: user, user: user, appID: appID, member: member, outcome: outcome,
                     detail: "\(detail); more than \(quota.burst) requests in a short time: further refusals "
                        + "are not recorded for \(wait.spokenSeconds)")
        logger.notice("request: \(user) started more than \(quota.burst) requests in a short time; "
            + "refusals are not recorded for \(wait.spokenSeconds)")
        return false
    }

    /// Until when a request starting to wait now waits for the one open for
    /// the same app (or the user's open sheet) to end: as long as that one
    /// can wait for people, its alert and then a guardian's decision
    /// (`PromptTimeout` + `PendingTimeout`). A request still waiting then
    /// fails, and the app may ask again.
    var turnDeadline: MonotonicInstant { .now.advanced(by: turnWait) }

    private var turnWait: Duration {
        let configuration = family.configuration
        return configuration.promptTimeout + configuration.pendingTimeout
    }

    /// Audits and logs a request that stopped waiting for the one open for
    /// its app, and returns the failure to throw.
    func gaveUpWaiting(_ action: AuditAction, _ member: FamilyControlsMember?, caller: Caller,
                       channel: any RequestChannel) -> GuardFailure {
        let user = caller.account.name
        let appID = caller.app.appID
        if channel.isClosed {
            ledger.audit(.cancel, actor: user, user: user, appID: appID, member: member, outcome: .canceled,
                         detail: "the app went away while another \(action) of it was open")
            logger.notice("\(action): \(appID) for \(user) canceled while waiting for the one open for it")
            return .canceled("the app went away while another request of it was open")
        }
        let waited = turnWait
        ledger.audit(.cancel, actor: user, user: user, appID: appID, member: member, outcome: .timedOut,
                     detail: "another \(action) of the app was still open after \(waited.spokenSeconds)")
        logger.notice("\(action): \(appID) for \(user) gave up waiting \(waited.spokenSeconds) for the one open for it")
        return .canceled("another request of \(caller.app.displayName) was still open after \(waited.spokenSeconds); "
            + "try again once it has ended")
    }

    /// Locks (child only), then stores the approval durably, audits, notifies.
    func approve(_ caller: Caller, member: FamilyControlsMember, by approver: String) throws(GuardFailure) {
        let record = AuthorizationRecord(
            user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: member,
            status: .approved, approvedBy: approver, updatedAt: .now, appPath: caller.app.directory,
            appIdentity: caller.app.directoryIdentity, flatpak: caller.app.flatpak,
            displayName: caller.app.displayName)
        try keeper.approve(record, directory: caller.directory, audit: ledger.event(
            .approve, actor: approver, user: record.user, appID: record.appID, member: member, outcome: .approved))
        logger.notice("approved: \(record.appID) for \(record.user) as \(member) by \(approver)")
    }

    /// Refuses a request or revoke (`action`) while `user` has started too
    /// many of them lately, every kind together.
    package func checkQuota(_ action: AuditAction, _ member: FamilyControlsMember?, caller: Caller) throws(GuardFailure) {
        let user = caller.account.name
        guard let (wait, first) = quota.take(for: user) else { return }
        if first {
            ledger.audit(action, actor: user, user: user, appID: caller.app.appID, member: member, outcome: .refused,
                        detail: "more than \(quota.burst) requests in a short time; further ones refused for \(wait.spokenSeconds)")
            logger.notice("request: \(user) started more than \(quota.burst) requests in a short time; refusing for \(wait.spokenSeconds)")
        }
        throw .canceled("Too many requests. Try again in \(wait.spokenSeconds).")
    }

    /// "Don't Allow": the status becomes denied.
    func deny(_ caller: Caller, member: FamilyControlsMember, actor: String,
              detail: String = "Don't Allow at the alert") throws(GuardFailure) {
        let record = AuthorizationRecord(
            user: caller.account.name, uid: caller.account.uid, appID: caller.app.appID, member: member,
            status: .denied, approvedBy: nil, updatedAt: .now, appPath: caller.app.directory,
            appIdentity: caller.app.directoryIdentity, flatpak: caller.app.flatpak,
            displayName: caller.app.displayName)
        try ledger.commit(record, audit: ledger.event(.deny, actor: actor, user: record.user, appID: record.appID,
                                                      member: member, outcome: .denied, detail: detail))
        logger.notice("denied: \(record.appID) for \(record.user) by \(actor) (\(detail))")
    }
}

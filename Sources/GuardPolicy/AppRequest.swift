import AuthorizationRules
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import SystemKit
import UpdateSignature
import GuardStore

/// The real Guard's steps of an app's request or revoke
/// (``AppRequestFlow``, which both Guards run, holds the sequence): the
/// family and the store read, the alert and PAM over the app's channel,
/// guardians asked at the ``GuardianDesk``, and the outcome locked
/// (``LockKeeper``) and recorded (``AuthorizationLedger``), each in the
/// app's turn (``AppTurns``).
struct AppRequest: AppRequestSteps {
    typealias Purpose = AppRequestFlow<AppRequest>.Purpose
    typealias InPersonAttempts = AuthenticationSheet.InPersonAttempts

    let policy: AuthorizationPolicy
    let purpose: Purpose
    let caller: Caller
    let channel: any RequestChannel

    /// Runs the request's whole life on the calling thread, one of the
    /// Guard's own (it blocks on people and on PAM).
    /// - Returns: the status it leaves: `approved` for a request, `notDetermined` for a revoke.
    /// - Throws: the refusal, as the app hears it.
    func run() throws(GuardFailure) -> AuthorizationStatus {
        try AppRequestFlow(purpose, steps: self).run()
    }

    var app: AskingApp {
        AskingApp(user: user, appID: caller.app.appID, displayName: caller.app.displayName)
    }

    var hasHungUp: Bool { channel.isClosed }

    var asksGuardianElsewhere: Bool { !policy.family.configuration.inSessionApproval }

    var offersGuardianCode: Bool { policy.offersGuardianCode(to: user) }

    // MARK: Asked

    func admit(_ member: FamilyControlsMember) throws(GuardFailure) {
        try policy.admit(member, from: caller)
    }

    func pendingUpdate() throws(GuardFailure) -> PendingRequest.Update? {
        try policy.keeper.followFlatpakUpdate(user: user, app: caller.app)
    }

    /// A moved Flatpak app's request at a commit only a guardian can let in:
    /// an `update` request, decided from a guardian's own session, whose
    /// approval moves the app's approval to that commit.
    func awaitUpdate(_ update: PendingRequest.Update) throws(GuardFailure) -> AuthorizationStatus {
        policy.logger.info("update: \(caller.app.appID) for \(user) runs \(update.to); a parent or guardian is asked")
        let (outcome, timeout) = try policy.desk.awaitGuardian(.update, caller: caller, update: update, channel: channel)
        // Approved: the guardian's own call moved the approval (``AuthorizationPolicy/decide``).
        try outcome.letIn(timeout: timeout) { guardian in
            GuardFailure(.restricted, "\(guardian) did not let this version of \(caller.app.displayName) in; "
                + "the approved version stays approved, and this one is not")
        }
        return .approved
    }

    /// The authorization recorded now, as the rules read it.
    func recorded() throws(GuardFailure) -> RecordedAuthorization? {
        guard let record = try policy.ledger.authorization(user: user, appID: caller.app.appID) else { return nil }
        // A moved Flatpak app's approval is of one commit: another is named by the approved deployment.
        let approvedCommit = AuthorizationLedger.isApprovedDeployment(record.flatpakOrigin == nil ? nil : record.flatpak,
                                                                      running: caller.app.flatpak)
        return RecordedAuthorization(status: record.status, member: record.member, approvedBy: record.approvedBy,
                                     isThisFolder: record.appIdentity == caller.app.directoryIdentity && approvedCommit,
                                     folder: DisplayText.sanitized(approvedCommit ? record.appPath
                                                                   : record.flatpak?.path ?? record.appPath))
    }

    func refuseFolderOfAnotherApp() throws(GuardFailure) {
        try policy.refuseFolderOfAnotherApp(caller)
    }

    func checkQuota(_ purpose: AuthorizationRules.Purpose, _ member: FamilyControlsMember?) throws(GuardFailure) {
        try policy.checkQuota(purpose == .request ? .request : .revoke, member, caller: caller)
    }

    /// The administrator's approval of this app for this child
    /// (`ApprovedApps=`), applied as a guardian's approval would be (locked,
    /// recorded, its monitor started) when its content is the
    /// administrator's to vouch for. The signature is checked again once
    /// the folder is locked: what the child changed in between is not what
    /// the administrator vouched for.
    func approvedByConfiguration() throws(GuardFailure) -> Bool {
        let approval: ConfiguredApproval?
        do throws(Errno) {
            approval = try policy.family.configuredApproval(of: caller.app.appID, for: caller.account)
        } catch {
            policy.logger.error("cannot resolve family membership of \(user): \(error)")
            throw GuardFailure(.networkError, "the user directory could not be reached to check the family")
        }
        guard let approval else { return false }
        guard isVouchedForByTheAdministrator() else {
            policy.logger.notice("request: \(caller.app.appID) for \(user) is in ApprovedApps= of \(approval.file), but "
                + "its content is not one the administrator vouched for (a root's Flatpak installation, or a folder "
                + "signed by a key of [Updates] TrustedKeys=); a parent or guardian is asked")
            return false
        }
        try policy.turns.save(caller.key) { () throws(GuardFailure) in
            try policy.approve(caller, member: .child, by: approval.approver)
            guard isVouchedForByTheAdministrator() else {
                try policy.revoke(user: user, appID: caller.app.appID, actor: approval.approver,
                                  detail: "the folder changed while it was being locked")
                throw GuardFailure(.restricted, "\(caller.app.displayName) changed while it was being approved; ask again")
            }
        }
        return true
    }

    /// Whether the app's content is the administrator's to vouch for, not
    /// the child's: an `ApprovedApps=` line names an app ID, and a child can
    /// name a folder of their own anything. So: a Flatpak app deployed in the
    /// system installation (which only root may change, never the Guard's,
    /// where a child's own apps are moved), or an app folder signed by a key
    /// the administrator trusts for it (`[Updates] TrustedKeys=`).
    private func isVouchedForByTheAdministrator() -> Bool {
        if let flatpak = caller.app.flatpak {
            return flatpak.installation.kind == .system
                && flatpak.installation.path != policy.family.configuration.flatpakGuardInstallation
        }
        let keys = policy.family.configuration.trustedUpdateKeys(for: caller.app.appID)
        guard !keys.isEmpty, let folder = try? caller.directory.reopened() else { return false }
        defer { folder.close() }
        return (try? UpdateSignature.verify(folder, withAnyOf: keys)) != nil
    }

    func inTurn(_ purpose: AuthorizationRules.Purpose,
                _ body: () throws(GuardFailure) -> AuthorizationStatus) throws(GuardFailure) -> AuthorizationStatus {
        let action: AuditAction = purpose == .request ? .request : .revoke
        let ended = try policy.turns.request(caller.key, until: policy.turnDeadline, unless: channel.hangUp, onWait: {
            policy.logger.info("\(action): \(caller.app.appID) for \(user) waits for the request open for it to end")
        }, body)
        guard let ended else { throw policy.gaveUpWaiting(action, auditedMember, caller: caller, channel: channel) }
        return ended
    }

    func saving<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        try policy.turns.save(caller.key, body)
    }

    // MARK: The people

    func askAlert(_ question: String, member: FamilyControlsMember,
                  offeringGuardianHere: Bool) throws(GuardFailure) -> AlertResponse {
        try policy.sheet.askAlert(question, member: member, caller: caller, channel: channel,
                                  offeringGuardianHere: offeringGuardianHere)
    }

    func inPersonAttempts() -> InPersonAttempts {
        InPersonAttempts(returnsLeft: policy.limits.returnsToAlertPerRequest)
    }

    /// Their name, then their current one-time code, on the code service,
    /// with the user's one sheet held (nothing typed goes back to the alert,
    /// its attempts still counted).
    func guardianHere(_ member: FamilyControlsMember, attempts: inout InPersonAttempts) throws(GuardFailure) -> String? {
        let sheet = policy.sheet
        let configuration = policy.family.configuration
        let who = AuthenticationSheet.Authentication.inSession(member, caller)
        let outcome = try sheet.withSheet(of: caller, channel: channel, deadline: policy.turnDeadline) {
            () throws(GuardFailure) -> AuthenticationSheet.InPersonOutcome in
            try sheet.checkBackoff(who, channel: channel, configuration: configuration)
            return try sheet.authenticate(who, over: channel, service: configuration.guardianCodeService, attempts: &attempts)
        }
        if case .authenticated(let approver) = outcome { return approver }
        policy.logger.info("request: \(caller.app.appID) for \(user) went back to the alert "
            + "(\(attempts.used) of \(configuration.maxAttempts) attempts used)")
        return nil
    }

    func withSheet<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        let who = AuthenticationSheet.Authentication.inSession(member, caller)
        return try policy.sheet.withSheet(of: caller, channel: channel, deadline: policy.turnDeadline) { () throws(GuardFailure) -> R in
            try policy.sheet.checkBackoff(who, channel: channel, configuration: policy.family.configuration)
            return try body()
        }
    }

    func authenticateInSession(_ member: FamilyControlsMember) throws(GuardFailure) -> String {
        try policy.sheet.authenticate(.inSession(member, caller), over: channel)
    }

    func awaitGuardian(_ purpose: AuthorizationRules.Purpose) throws(GuardFailure) -> GuardianVerdict {
        let (outcome, timeout) = try policy.desk.awaitGuardian(purpose == .request ? .approve : .revoke,
                                                               caller: caller, channel: channel)
        switch outcome {
        // The guardian's own call locked and recorded it (``AuthorizationPolicy/decide``).
        case .approved: return .approved
        case .denied(let guardian): return .denied(by: guardian)
        case .failed(let failure): return .failed(failure)
        case .canceled: return .canceled
        case .expired: return .expired(after: timeout.spokenSeconds)
        }
    }

    // MARK: Carried out

    func approve(_ member: FamilyControlsMember, by approver: String) throws(GuardFailure) {
        try policy.approve(caller, member: member, by: approver)
    }

    func deny(_ member: FamilyControlsMember) throws(GuardFailure) {
        try policy.deny(caller, member: member, actor: user)
    }

    func revoke(by actor: String) throws(GuardFailure) {
        try policy.revoke(user: user, appID: caller.app.appID, actor: actor)
    }

    func note(_ note: AppRequestNote) {
        switch note {
        case .started(let member):
            policy.ledger.audit(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: .started)
            policy.logger.info("request: \(caller.app.appID) for \(user) as \(member) "
                + "(pid executable \(DisplayText.sanitized(caller.app.executable)))")
        case .revokeRefused(let why):
            policy.ledger.audit(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                outcome: .refused, detail: why)
        case .dontAllowAfterApproval(let approver):
            policy.ledger.audit(.deny, actor: user, user: user, appID: caller.app.appID, member: member,
                                outcome: .noEffect, detail: "Don't Allow after it was approved by \(approver ?? "an administrator")")
        }
    }

    // MARK: Names

    private var user: String { caller.account.name }

    private var member: FamilyControlsMember {
        if case .request(let member) = purpose { return member }
        return .child
    }

    /// The member the audit rows of a revoke leave unnamed.
    private var auditedMember: FamilyControlsMember? {
        if case .request(let member) = purpose { return member }
        return nil
    }
}

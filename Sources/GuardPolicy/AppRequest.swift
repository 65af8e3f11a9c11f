import AuthorizationRules
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import SystemKit
import UpdateSignature
import GuardStore

/// One app's request (`requestAuthorization(for:)`) or revoke
/// (`revokeAuthorization`), from the moment it asks until its outcome is
/// recorded, read top to bottom in ``run()``:
///
/// ```
/// asked ─── admission, the record, the quota (AuthorizationRules) ──► answered at once, or refused
///   │  the app's turn (AppTurns.request): one request per (user, app)
///   ▼
/// alert (AuthenticationSheet) ─── Don't Allow ──────────────────────────────┐
///   │ continue                                                               │
///   ├─ a child, InSessionApproval=no ─► pending (GuardianDesk) ─► decided by │
///   │   or code                         a guardian, whose own call locks and │
///   │                                   records; or, for a request only,     │
///   │                                   "a parent or guardian is here":      │
///   │                                   their one-time code, in the session  │
///   │                                   (nothing typed goes back to the      │
///   │                                   alert, its attempts still counted)   │
///   └─ otherwise ─► authenticating in the session (AuthenticationSheet) ─►   ▼
///                                                                         decided
///   decided ── the short save (AppTurns.save) ──► locked (LockKeeper) ──► recorded (AuthorizationLedger)
/// ```
///
/// Each step returns what happened; a refusal is thrown once, as the app
/// hears it, and a success is always returned.
struct AppRequest {
    enum Purpose {
        case request(FamilyControlsMember)
        case revoke
    }

    /// What the request found when it started, or after waiting for its turn.
    private enum Start {
        case answered(AuthorizationStatus)
        case ask
        /// A moved Flatpak app runs a commit only a guardian can let in.
        case update(PendingRequest.Update)
    }

    /// What the people asked decided.
    private enum Decision {
        /// "Don't Allow" at the alert.
        case dontAllow
        /// Authenticated in the app's session: `approver` said yes.
        case authenticated(by: String)
        /// Decided (or not) from a guardian's own session, within `timeout`.
        case byGuardian(PendingRequest.Outcome, timeout: Duration)
    }

    let policy: AuthorizationPolicy
    let purpose: Purpose
    let caller: Caller
    let channel: any RequestChannel

    /// Runs the request's whole life on the calling thread, one of the
    /// Guard's own (it blocks on people and on PAM).
    /// - Returns: the status it leaves: `approved` for a request, `notDetermined` for a revoke.
    /// - Throws: the refusal, as the app hears it.
    func run() throws(GuardFailure) -> AuthorizationStatus {
        // Asked.
        switch purpose {
        case .request:
            guard !channel.isClosed else { throw .canceled("the app hung up before the request started") }
            if case .answered(let status) = try start() { return status }
        case .revoke:
            try policy.checkQuota(.revoke, nil, caller: caller)
        }
        let ended = try policy.turns.request(caller.key, until: policy.turnDeadline, unless: channel.hangUp, onWait: {
            policy.logger.info("\(action): \(caller.app.appID) for \(user) waits for the request open for it to end")
        }) { () throws(GuardFailure) -> AuthorizationStatus in
            // Another request for this app may have ended while this one waited.
            switch try start() {
            case .answered(let status): return status
            case .update(let update): return try awaitUpdate(update)
            case .ask: break
            }
            if case .request(let member) = purpose {
                // Counted first: checking a folder's signature reads all of it.
                try policy.checkQuota(.request, member, caller: caller)
            }
            if case .request(.child) = purpose, let approval = try configuredApproval() {
                if isVouchedForByTheAdministrator() { return try approve(by: approval) }
                policy.logger.notice("request: \(caller.app.appID) for \(user) is in ApprovedApps= of \(approval.file), but "
                    + "its content is not one the administrator vouched for (a root's Flatpak installation, or a folder "
                    + "signed by a key of [Updates] TrustedKeys=); a parent or guardian is asked")
            }
            if case .request(let member) = purpose {
                policy.ledger.audit(.request, actor: user, user: user, appID: caller.app.appID, member: member, outcome: .started)
                policy.logger.info("request: \(caller.app.appID) for \(user) as \(member) "
                    + "(pid executable \(DisplayText.sanitized(caller.app.executable)))")
            }
            let decision = try ask()
            return try carryOut(decision)
        }
        guard let ended else { throw policy.gaveUpWaiting(action, auditedMember, caller: caller, channel: channel) }
        return ended
    }

    // MARK: Asked

    /// What the request or revoke finds, with the refusals that need no prompt.
    private func start() throws(GuardFailure) -> Start {
        switch purpose {
        case .request(let member):
            // Checked again each time: the family may have changed since the request was admitted.
            try policy.admit(member, from: caller)
            if member == .child, let update = try policy.keeper.followFlatpakUpdate(user: user, app: caller.app) {
                return .update(update)
            }
            let current = try recorded()
            if member == .child { try policy.refuseFolderOfAnotherApp(caller) }
            switch AuthorizationRules.requestStart(member, current: current, app: asking) {
            case .answerApproved: return .answered(.approved)
            case .ask: return .ask
            case .refuse(let refusal): throw refusal
            }
        case .revoke:
            switch AuthorizationRules.revokeStart(current: try recorded(), app: asking) {
            case .noEffect, .revokeAtOnce:
                try revokeWithoutGuardian()
                return .answered(.notDetermined)
            case .askGuardian:
                return .ask
            case .refuse(let refusal):
                policy.ledger.audit(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                    outcome: .refused, detail: "asked by a copy of the app in another folder")
                throw refusal
            }
        }
    }

    /// A moved Flatpak app's request at a commit only a guardian can let in:
    /// an `update` request, decided from a guardian's own session, whose
    /// approval moves the app's approval to that commit.
    private func awaitUpdate(_ update: PendingRequest.Update) throws(GuardFailure) -> AuthorizationStatus {
        policy.logger.info("update: \(caller.app.appID) for \(user) runs \(update.to); a parent or guardian is asked")
        let (outcome, timeout) = try policy.desk.awaitGuardian(.update, caller: caller, update: update, channel: channel)
        // Approved: the guardian's own call moved the approval (``AuthorizationPolicy/decide``).
        try outcome.letIn(timeout: timeout) { guardian in
            GuardFailure(.restricted, "\(guardian) did not let this version of \(caller.app.displayName) in; "
                + "the approved version stays approved, and this one is not")
        }
        return .approved
    }

    /// An app's revoke that needs no guardian: an individual's approval, or
    /// nothing approved (no effect).
    private func revokeWithoutGuardian() throws(GuardFailure) {
        try policy.turns.save(caller.key) { () throws(GuardFailure) in
            if let refusal = AuthorizationRules.revokeWithoutGuardian(now: try recorded(), app: asking) {
                policy.ledger.audit(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                    outcome: .refused, detail: "approved meanwhile; lifting it takes a parent or guardian")
                throw refusal
            }
            try policy.revoke(user: user, appID: caller.app.appID, actor: user)
        }
    }

    /// The administrator's approval of this app for this child
    /// (`ApprovedApps=`), as the family says now.
    private func configuredApproval() throws(GuardFailure) -> ConfiguredApproval? {
        do throws(Errno) {
            return try policy.family.configuredApproval(of: caller.app.appID, for: caller.account)
        } catch {
            policy.logger.error("cannot resolve family membership of \(user): \(error)")
            throw GuardFailure(.networkError, "the user directory could not be reached to check the family")
        }
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

    /// Approves as a guardian's approval would (locked, recorded, its
    /// monitor started), with the configuration as the approver. The
    /// signature is checked again once the folder is locked: what the child
    /// changed in between is not what the administrator vouched for.
    private func approve(by approval: ConfiguredApproval) throws(GuardFailure) -> AuthorizationStatus {
        try policy.turns.save(caller.key) { () throws(GuardFailure) -> AuthorizationStatus in
            try policy.approve(caller, member: .child, by: approval.approver)
            guard isVouchedForByTheAdministrator() else {
                try policy.revoke(user: user, appID: caller.app.appID, actor: approval.approver,
                                  detail: "the folder changed while it was being locked")
                throw GuardFailure(.restricted, "\(caller.app.displayName) changed while it was being approved; ask again")
            }
            return .approved
        }
    }

    // MARK: Alert, then pending or authenticating

    private func ask() throws(GuardFailure) -> Decision {
        let sheet = policy.sheet
        let configuration = policy.family.configuration
        if member == .child && !configuration.inSessionApproval {
            let offersCode = AuthorizationRules.oneTimeCodeMayDecide(rulesPurpose) && policy.offersGuardianCode(to: user)
            // Kept across going back to the alert: going back gives no attempt back.
            var attempts = AuthenticationSheet.InPersonAttempts(returnsLeft: policy.limits.returnsToAlertPerRequest)
            while true {
                switch try sheet.askAlert(question, member: member, caller: caller, channel: channel,
                                          offeringGuardianHere: offersCode) {
                case .refuse:
                    return .dontAllow
                case .guardianHere:
                    // Their name, then their current one-time code, on the code
                    // service: useless to the child's processes once used.
                    let who = AuthenticationSheet.Authentication.inSession(member, caller)
                    let outcome = try sheet.withSheet(of: caller, channel: channel, deadline: policy.turnDeadline) {
                        () throws(GuardFailure) -> AuthenticationSheet.InPersonOutcome in
                        try sheet.checkBackoff(who, channel: channel, configuration: policy.family.configuration)
                        return try sheet.authenticate(who, over: channel, service: policy.family.configuration.guardianCodeService,
                                                      attempts: &attempts)
                    }
                    if case .authenticated(let approver) = outcome { return .authenticated(by: approver) }
                    policy.logger.info("request: \(caller.app.appID) for \(user) went back to the alert "
                        + "(\(attempts.used) of \(policy.family.configuration.maxAttempts) attempts used)")
                case .allow:
                    let (outcome, timeout) = try policy.desk.awaitGuardian(pendingPurpose, caller: caller, channel: channel)
                    return .byGuardian(outcome, timeout: timeout)
                }
            }
        }
        // In the app's own session, with the user's one sheet held.
        let who = AuthenticationSheet.Authentication.inSession(member, caller)
        return try sheet.withSheet(of: caller, channel: channel, deadline: policy.turnDeadline) { () throws(GuardFailure) -> Decision in
            try sheet.checkBackoff(who, channel: channel, configuration: policy.family.configuration)
            guard try sheet.askAlert(question, member: member, caller: caller, channel: channel) == .allow else {
                return .dontAllow
            }
            return .authenticated(by: try sheet.authenticate(who, over: channel))
        }
    }

    // MARK: Decided, then locked and recorded

    private func carryOut(_ decision: Decision) throws(GuardFailure) -> AuthorizationStatus {
        switch decision {
        case .dontAllow:
            return try policy.turns.save(caller.key) { () throws(GuardFailure) -> AuthorizationStatus in
                switch AuthorizationRules.dontAllow(rulesPurpose, now: try recorded(), app: asking) {
                case .approvedMeanwhile(let approver):
                    policy.ledger.audit(.deny, actor: user, user: user, appID: caller.app.appID, member: member,
                                        outcome: .noEffect,
                                        detail: "Don't Allow after it was approved by \(approver ?? "an administrator")")
                    return .approved
                case .deny(let refusal):
                    try policy.deny(caller, member: member, actor: user)
                    throw refusal
                case .keepApproval(let refusal):
                    policy.ledger.audit(.revoke, actor: user, user: user, appID: caller.app.appID, member: .child,
                                        outcome: .refused, detail: "Don't Allow at the alert")
                    throw refusal
                }
            }
        case .authenticated(let approver):
            return try policy.turns.save(caller.key) { () throws(GuardFailure) -> AuthorizationStatus in
                switch purpose {
                case .request(let member):
                    try policy.approve(caller, member: member, by: approver)
                    return .approved
                case .revoke:
                    try policy.revoke(user: user, appID: caller.app.appID, actor: approver)
                    return .notDetermined
                }
            }
        case .byGuardian(let outcome, let timeout):
            switch outcome {
            case .approved:
                // The guardian's own call locked and recorded it (``AuthorizationPolicy/decide``).
                return resultingStatus
            case .denied(let guardian):
                throw AuthorizationRules.guardianDecided(rulesPurpose, approve: false, by: guardian, app: asking)
                    ?? AuthorizationRules.ended(timedOut: false)
            case .failed(let failure):
                throw failure
            case .canceled:
                throw AuthorizationRules.ended(timedOut: false)
            case .expired:
                throw AuthorizationRules.expired(after: timeout.spokenSeconds)
            }
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

    private var action: AuditAction {
        if case .request = purpose { return .request }
        return .revoke
    }

    private var rulesPurpose: AuthorizationRules.Purpose {
        if case .request = purpose { return .request }
        return .revoke
    }

    private var pendingPurpose: PendingRequest.Purpose {
        if case .request = purpose { return .approve }
        return .revoke
    }

    private var resultingStatus: AuthorizationStatus {
        if case .request = purpose { return .approved }
        return .notDetermined
    }

    private var asking: AskingApp {
        AskingApp(user: user, appID: caller.app.appID, displayName: caller.app.displayName)
    }

    /// The question of the alert.
    private var question: String {
        switch purpose {
        case .request(.child):
            "Allow “\(caller.app.displayName)” to provide parental controls for \(user)?"
        case .request:
            "Allow “\(caller.app.displayName)” to provide parental controls for you (\(user))?"
        case .revoke:
            "Allow “\(caller.app.displayName)” to stop providing parental controls for \(user)? "
                + "Its folder will no longer be protected from deletion."
        }
    }

    /// The authorization recorded now, as the rules read it.
    private func recorded() throws(GuardFailure) -> RecordedAuthorization? {
        guard let record = try policy.ledger.authorization(user: user, appID: caller.app.appID) else { return nil }
        // A moved Flatpak app's approval is of one commit: another is named by the approved deployment.
        let approvedCommit = AuthorizationLedger.isApprovedDeployment(record.flatpakOrigin == nil ? nil : record.flatpak,
                                                                      running: caller.app.flatpak)
        return RecordedAuthorization(status: record.status, member: record.member, approvedBy: record.approvedBy,
                                     isThisFolder: record.appIdentity == caller.app.directoryIdentity && approvedCommit,
                                     folder: DisplayText.sanitized(approvedCommit ? record.appPath
                                                                   : record.flatpak?.path ?? record.appPath))
    }
}

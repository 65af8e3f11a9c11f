import FamilyControlsModel
import GuardProtocol

/// One app's request (`requestAuthorization(for:)`) or revoke
/// (`revokeAuthorization`), from the moment it asks until its outcome is
/// recorded: the one sequence both Guards run, the real one (`GuardPolicy`'s
/// `AppRequest`, over the store, PAM and the locks) and the in-memory one
/// apps test with (`FamilyControlsTesting`). Each supplies the steps
/// (``AppRequestSteps``); the order, the branches and the refusals are here.
///
/// ```
/// asked ─── admission, the record, the quota (AuthorizationRules) ──► answered at once, or refused
///   │  the app's turn: one request per (user, app)
///   ▼
/// alert ─── Don't Allow ─────────────────────────────────────────────────────┐
///   │ continue                                                               │
///   ├─ a child, InSessionApproval=no ─► pending ─► decided by a guardian,    │
///   │                                   whose own call locks and records;    │
///   │                                   or, for a request only, "a parent or │
///   │                                   guardian is here": their one-time    │
///   │                                   code, in the session                 │
///   └─ otherwise ─► authenticating in the session (the user's one sheet) ─►  ▼
///                                                                         decided
///   decided ── the short save ──► approved, denied or revoked (locked and recorded)
/// ```
///
/// A refusal is thrown once, as the app hears it; a success is returned.
package struct AppRequestFlow<Steps: AppRequestSteps> {
    package enum Purpose: Hashable, Sendable {
        case request(FamilyControlsMember)
        case revoke
    }

    /// What the request found when it started, or after waiting for its turn.
    private enum Start {
        case answered(AuthorizationStatus)
        case ask
        /// A moved Flatpak app runs a commit only a guardian can let in.
        case update(Steps.Update)
    }

    /// What the people asked decided.
    private enum Decision {
        /// "Don't Allow" at the alert.
        case dontAllow
        /// Authenticated in the app's session: `approver` said yes.
        case authenticated(by: String)
        /// Decided (or not) from a guardian's own session.
        case byGuardian(GuardianVerdict)
    }

    package let purpose: Purpose
    package let steps: Steps

    package init(_ purpose: Purpose, steps: Steps) {
        self.purpose = purpose
        self.steps = steps
    }

    /// Runs the request's whole life on the calling thread (it blocks on people).
    /// - Returns: the status it leaves: `approved` for a request, `notDetermined` for a revoke.
    /// - Throws: the refusal, as the app hears it.
    package func run() throws(GuardFailure) -> AuthorizationStatus {
        // Asked.
        switch purpose {
        case .request:
            guard !steps.hasHungUp else { throw .canceled("the app hung up before the request started") }
            if case .answered(let status) = try start() { return status }
        case .revoke:
            try steps.checkQuota(.revoke, nil)
        }
        return try steps.inTurn(rulesPurpose) { () throws(GuardFailure) -> AuthorizationStatus in
            // Another request for this app may have ended while this one waited.
            switch try start() {
            case .answered(let status): return status
            case .update(let update): return try steps.awaitUpdate(update)
            case .ask: break
            }
            if case .request(let member) = purpose {
                // Counted first: checking a folder's signature reads all of it.
                try steps.checkQuota(.request, member)
                if member == .child, try steps.approvedByConfiguration() { return .approved }
                steps.note(.started(member))
            }
            return try carryOut(try ask())
        }
    }

    // MARK: Asked

    /// What the request or revoke finds, with the refusals that need no prompt.
    private func start() throws(GuardFailure) -> Start {
        switch purpose {
        case .request(let member):
            // Checked again each time: the family may have changed since the request was admitted.
            try steps.admit(member)
            if member == .child, let update = try steps.pendingUpdate() { return .update(update) }
            let current = try steps.recorded()
            if member == .child { try steps.refuseFolderOfAnotherApp() }
            switch AuthorizationRules.requestStart(member, current: current, app: steps.app) {
            case .answerApproved: return .answered(.approved)
            case .ask: return .ask
            case .refuse(let refusal): throw refusal
            }
        case .revoke:
            switch AuthorizationRules.revokeStart(current: try steps.recorded(), app: steps.app) {
            case .noEffect, .revokeAtOnce:
                try revokeWithoutGuardian()
                return .answered(.notDetermined)
            case .askGuardian:
                return .ask
            case .refuse(let refusal):
                steps.note(.revokeRefused("asked by a copy of the app in another folder"))
                throw refusal
            }
        }
    }

    /// An app's revoke that needs no guardian: an individual's approval, or
    /// nothing approved (no effect).
    private func revokeWithoutGuardian() throws(GuardFailure) {
        try steps.saving { () throws(GuardFailure) in
            if let refusal = AuthorizationRules.revokeWithoutGuardian(now: try steps.recorded(), app: steps.app) {
                steps.note(.revokeRefused("approved meanwhile; lifting it takes a parent or guardian"))
                throw refusal
            }
            try steps.revoke(by: steps.app.user)
        }
    }

    // MARK: Alert, then pending or authenticating

    private func ask() throws(GuardFailure) -> Decision {
        if member == .child && steps.asksGuardianElsewhere {
            let offersCode = AuthorizationRules.oneTimeCodeMayDecide(rulesPurpose) && steps.offersGuardianCode
            // Kept across going back to the alert: going back gives no attempt back.
            var attempts = steps.inPersonAttempts()
            while true {
                switch try steps.askAlert(question, member: member, offeringGuardianHere: offersCode) {
                case .refuse:
                    return .dontAllow
                case .guardianHere:
                    // Their name, then their current one-time code: useless to the child's processes once used.
                    if let approver = try steps.guardianHere(member, attempts: &attempts) { return .authenticated(by: approver) }
                case .allow:
                    return .byGuardian(try steps.awaitGuardian(rulesPurpose))
                }
            }
        }
        // In the app's own session, with the user's one sheet held.
        return try steps.withSheet { () throws(GuardFailure) -> Decision in
            guard try steps.askAlert(question, member: member, offeringGuardianHere: false) == .allow else {
                return .dontAllow
            }
            return .authenticated(by: try steps.authenticateInSession(member))
        }
    }

    // MARK: Decided, then locked and recorded

    private func carryOut(_ decision: Decision) throws(GuardFailure) -> AuthorizationStatus {
        switch decision {
        case .dontAllow:
            return try steps.saving { () throws(GuardFailure) -> AuthorizationStatus in
                switch AuthorizationRules.dontAllow(rulesPurpose, now: try steps.recorded(), app: steps.app) {
                case .approvedMeanwhile(let approver):
                    steps.note(.dontAllowAfterApproval(by: approver))
                    return .approved
                case .deny(let refusal):
                    try steps.deny(member)
                    throw refusal
                case .keepApproval(let refusal):
                    steps.note(.revokeRefused("Don't Allow at the alert"))
                    throw refusal
                }
            }
        case .authenticated(let approver):
            return try steps.saving { () throws(GuardFailure) -> AuthorizationStatus in
                switch purpose {
                case .request(let member):
                    try steps.approve(member, by: approver)
                    return .approved
                case .revoke:
                    try steps.revoke(by: approver)
                    return .notDetermined
                }
            }
        case .byGuardian(let verdict):
            switch verdict {
            case .approved:
                // The guardian's own decision locked and recorded it.
                return resultingStatus
            case .denied(let guardian):
                throw AuthorizationRules.guardianDecided(rulesPurpose, approve: false, by: guardian, app: steps.app)
                    ?? AuthorizationRules.ended(timedOut: false)
            case .failed(let failure):
                throw failure
            case .canceled:
                throw AuthorizationRules.ended(timedOut: false)
            case .expired(let waited):
                throw AuthorizationRules.expired(after: waited)
            }
        }
    }

    // MARK: Names

    private var member: FamilyControlsMember {
        if case .request(let member) = purpose { return member }
        return .child
    }

    private var rulesPurpose: AuthorizationRules.Purpose {
        if case .request = purpose { return .request }
        return .revoke
    }

    private var resultingStatus: AuthorizationStatus {
        if case .request = purpose { return .approved }
        return .notDetermined
    }

    /// The question of the alert.
    private var question: String {
        let app = steps.app
        switch purpose {
        case .request(.child):
            return "Allow “\(app.displayName)” to provide parental controls for \(app.user)?"
        case .request:
            return "Allow “\(app.displayName)” to provide parental controls for you (\(app.user))?"
        case .revoke:
            return "Allow “\(app.displayName)” to stop providing parental controls for \(app.user)? "
                + "Its folder will no longer be protected from deletion."
        }
    }
}

/// What a parent or guardian decided from their own session (`familyctl`,
/// the desktop agent, `-H`) about a pending request or revoke.
package enum GuardianVerdict: Sendable {
    /// Yes: their own decision has already been carried out (locked and recorded).
    case approved
    case denied(by: String)
    /// They said yes, but it could not be carried out.
    case failed(GuardFailure)
    /// The app went away, or the request was withdrawn.
    case canceled
    /// Nobody decided within `waited` (spoken: "15 minutes").
    case expired(after: String)
}

/// What a step of ``AppRequestFlow`` reports that changes nothing: each
/// Guard audits and logs it in its own way.
package enum AppRequestNote: Sendable {
    /// The request goes on to the people: it is recorded as started.
    case started(FamilyControlsMember)
    /// A revoke that was refused, and why (in the audit's words).
    case revokeRefused(String)
    /// Don't Allow after someone approved the app meanwhile: it stays approved.
    case dontAllowAfterApproval(by: String?)
}

/// The steps a Guard supplies to ``AppRequestFlow``: reading its state,
/// asking its people, and carrying out what they decided. Every step that
/// can refuse throws the refusal as the app hears it, already audited.
package protocol AppRequestSteps {
    /// What a moved Flatpak app's update request waits on (`Never` where there are none).
    associatedtype Update
    /// One request's attempts at a guardian's one-time code, kept across going back to the alert.
    associatedtype InPersonAttempts

    /// The app and its user, as the rules name them.
    var app: AskingApp { get }
    /// Whether the app has hung up.
    var hasHungUp: Bool { get }
    /// Whether a child's alert leads to a guardian's own session (`InSessionApproval=no`)
    /// rather than to authenticating in the app.
    var asksGuardianElsewhere: Bool { get }
    /// Whether the alert may offer "a parent or guardian is here" (a guardian of this child has a code).
    var offersGuardianCode: Bool { get }

    // Asked
    /// Refuses a request `member` may not make (the family, as it is now).
    func admit(_ member: FamilyControlsMember) throws(GuardFailure)
    /// A moved Flatpak app running a commit only a guardian can let in.
    func pendingUpdate() throws(GuardFailure) -> Update?
    /// Waits for a guardian's decision on `update`: `approved`, or the refusal.
    func awaitUpdate(_ update: Update) throws(GuardFailure) -> AuthorizationStatus
    /// The authorization recorded now for this app and user.
    func recorded() throws(GuardFailure) -> RecordedAuthorization?
    /// Refuses a child's request from a folder another approved app owns.
    func refuseFolderOfAnotherApp() throws(GuardFailure)
    /// Counts the call against the user's quota; refuses it past the quota.
    func checkQuota(_ purpose: AuthorizationRules.Purpose, _ member: FamilyControlsMember?) throws(GuardFailure)
    /// Approves a child's request the administrator approved for them
    /// (`ApprovedApps=`) and vouched for. - Returns: whether it did.
    func approvedByConfiguration() throws(GuardFailure) -> Bool
    /// Runs `body` in the app's turn: one request or revoke per user and app at a time.
    func inTurn(_ purpose: AuthorizationRules.Purpose,
                _ body: () throws(GuardFailure) -> AuthorizationStatus) throws(GuardFailure) -> AuthorizationStatus
    /// Runs `body` with the app's record held for the short save of an outcome.
    func saving<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R

    // The people
    /// Shows the alert; its answer.
    func askAlert(_ question: String, member: FamilyControlsMember,
                  offeringGuardianHere: Bool) throws(GuardFailure) -> AlertResponse
    /// A fresh count of attempts, for one request.
    func inPersonAttempts() -> InPersonAttempts
    /// A parent or guardian at the child's screen, by their one-time code.
    /// - Returns: who authenticated, or nil when they went back to the alert.
    func guardianHere(_ member: FamilyControlsMember, attempts: inout InPersonAttempts) throws(GuardFailure) -> String?
    /// Runs `body` (the alert and the authentication in the app's session)
    /// with the user's one sheet held.
    func withSheet<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R
    /// Authenticates in the app's session. - Returns: who did (the approver).
    func authenticateInSession(_ member: FamilyControlsMember) throws(GuardFailure) -> String
    /// Waits for a parent or guardian to decide from their own session.
    func awaitGuardian(_ purpose: AuthorizationRules.Purpose) throws(GuardFailure) -> GuardianVerdict

    // Carried out
    /// Locks, records and tells the app it is approved as `member`.
    func approve(_ member: FamilyControlsMember, by approver: String) throws(GuardFailure)
    /// Records Don't Allow.
    func deny(_ member: FamilyControlsMember) throws(GuardFailure)
    /// Lifts the approval (and its locks).
    func revoke(by actor: String) throws(GuardFailure)
    /// Audits and logs what changed nothing.
    func note(_ note: AppRequestNote)
}

import AuthorizationRules
import FamilyControls
import GuardProtocol
import Synchronization

/// The in-memory Guard's steps of the Guard's own sequence
/// (``AppRequestFlow``): its state stands for the store and the locks, and
/// the test's ``Answer`` at the sheet for the people. A child's alert leads
/// to a guardian's decision, as on a Guard with `InSessionApproval=no` (the
/// default): `approve` is the child continuing and the guardian approving;
/// `deny` is Don't Allow at a request's alert, or the guardian's no to a
/// revoke. An individual's `approve` is their own authentication.
///
/// Runs on a thread of its own: it blocks on the test's answer, as the
/// Guard's steps block on people.
final class InMemoryRequestSteps: AppRequestSteps, Sendable {
    typealias Update = Never
    typealias InPersonAttempts = Int

    private let engine: InMemoryGuardEngine
    private let purpose: AppRequestFlow<InMemoryRequestSteps>.Purpose
    /// The answer given at the alert, for the step after it.
    private let given = Mutex<Answer?>(nil)

    init(engine: InMemoryGuardEngine, purpose: AppRequestFlow<InMemoryRequestSteps>.Purpose) {
        self.engine = engine
        self.purpose = purpose
    }

    var app: AskingApp { InMemoryGuardEngine.app }
    var hasHungUp: Bool { false }
    var asksGuardianElsewhere: Bool { true }
    var offersGuardianCode: Bool { false }

    // MARK: Asked

    func admit(_ member: FamilyControlsMember) throws(GuardFailure) {
        if let refusal = engine.admission(member) { throw refusal }
    }

    func pendingUpdate() -> Never? { nil }

    func awaitUpdate(_ update: Never) -> AuthorizationStatus { update }

    func recorded() -> RecordedAuthorization? { engine.recorded }

    /// One app, one folder: no other app's folder to ask from.
    func refuseFolderOfAnotherApp() {}

    /// No quota: a test asks as often as it likes.
    func checkQuota(_ purpose: AuthorizationRules.Purpose, _ member: FamilyControlsMember?) {}

    /// No configuration: only the sheet approves.
    func approvedByConfiguration() -> Bool { false }

    func inTurn(_ purpose: AuthorizationRules.Purpose,
                _ body: () throws(GuardFailure) -> AuthorizationStatus) throws(GuardFailure) -> AuthorizationStatus {
        try engine.inTurn(body)
    }

    /// The state changes atomically on its own.
    func saving<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R { try body() }

    // MARK: The people: the test at the sheet

    func askAlert(_ question: String, member: FamilyControlsMember,
                  offeringGuardianHere: Bool) throws(GuardFailure) -> AlertResponse {
        let sheet: Sheet.Purpose
        switch purpose {
        case .request(let member): sheet = .request(member)
        case .revoke: sheet = .revoke
        }
        let answer = engine.waitForAnswer(for: sheet)
        switch answer {
        case .approve:
            given.withLock { $0 = answer }
            return .allow
        case .deny:
            // A revoke's no is the guardian's; a request's is Don't Allow at the alert.
            guard case .revoke = purpose else { return .refuse }
            given.withLock { $0 = answer }
            return .allow
        case .cancel:
            throw AuthorizationRules.ended(timedOut: false)
        case .fail(let error):
            throw GuardFailure(error, error.errorDescription ?? error.caseName)
        }
    }

    func inPersonAttempts() -> Int { 0 }

    /// Never offered (`offersGuardianCode` is false).
    func guardianHere(_ member: FamilyControlsMember, attempts: inout Int) throws(GuardFailure) -> String? {
        throw AuthorizationRules.ended(timedOut: false)
    }

    func withSheet<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R { try body() }

    /// The individual's own authentication: the `approve` given at the alert.
    func authenticateInSession(_ member: FamilyControlsMember) -> String { InMemoryGuardEngine.app.user }

    /// The guardian's decision, carried out as the Guard carries out a
    /// guardian's own call before the app hears of it.
    func awaitGuardian(_ purpose: AuthorizationRules.Purpose) -> GuardianVerdict {
        switch given.withLock({ $0 }) {
        case .approve:
            switch self.purpose {
            case .request(let member): engine.change(to: .approved, member: member)
            case .revoke: engine.change(to: .notDetermined, member: nil)
            }
            return .approved
        case .deny:
            return .denied(by: InMemoryGuardEngine.guardian)
        case .cancel, .fail, nil:
            return .canceled
        }
    }

    // MARK: Carried out

    func approve(_ member: FamilyControlsMember, by approver: String) { engine.change(to: .approved, member: member) }
    func deny(_ member: FamilyControlsMember) { engine.change(to: .denied, member: member) }
    /// As the Guard's: lifts an approval; anything else (denied, undecided) is left as it is.
    func revoke(by actor: String) {
        guard engine.storedStatus == .approved else { return }
        engine.change(to: .notDetermined, member: nil)
    }
    /// No audit trail in memory.
    func note(_ note: AppRequestNote) {}
}

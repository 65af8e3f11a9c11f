import AuthorizationRules
import GuardProtocol
import FamilyControlsModel
import Testing

/// The rules both Guards follow, checked on their own: no store, no users.
@Suite struct AuthorizationRulesTests {
    private let app = AskingApp(user: "alice", appID: "org.example.Paint", displayName: "Paint")

    private func approved(_ member: FamilyControlsMember, here: Bool = true) -> RecordedAuthorization {
        RecordedAuthorization(status: .approved, member: member, approvedBy: "bob", isThisFolder: here,
                              folder: "/home/alice/Applications/org.example.Paint")
    }

    @Test func aChildRequestIsAdmittedOnlyFromAChild() {
        #expect(AuthorizationRules.admission(.child, isChild: true, app: app) == nil)
        let refusal = AuthorizationRules.admission(.child, isChild: false, app: app)
        #expect(refusal?.error == .invalidAccountType)
        #expect(refusal?.message == "alice is not a child in the family configuration; ask an administrator to add them to Children=")
    }

    @Test func aOneTimeCodeApprovesButNeverLiftsAnApproval() {
        #expect(AuthorizationRules.oneTimeCodeMayDecide(.request))
        #expect(!AuthorizationRules.oneTimeCodeMayDecide(.revoke))
    }

    @Test func anIndividualRequestIsRefusedFromAChild() {
        #expect(AuthorizationRules.admission(.individual, isChild: false, app: app) == nil)
        let refusal = AuthorizationRules.admission(.individual, isChild: true, app: app)
        #expect(refusal?.error == .invalidAccountType)
        #expect(refusal?.message == "alice is a child in the family: a parent or guardian must approve (request .child)")
    }

    @Test(arguments: [AuthorizationStatus.notDetermined, .denied])
    func aRequestWithNothingApprovedAsks(_ status: AuthorizationStatus) {
        let current = RecordedAuthorization(status: status, member: .child)
        #expect(AuthorizationRules.requestStart(.child, current: current, app: app) == .ask)
        #expect(AuthorizationRules.requestStart(.individual, current: current, app: app) == .ask)
        #expect(AuthorizationRules.requestStart(.child, current: nil, app: app) == .ask)
    }

    @Test func aRequestApprovedAsAskedIsAnsweredAtOnce() {
        #expect(AuthorizationRules.requestStart(.child, current: approved(.child), app: app) == .answerApproved)
        #expect(AuthorizationRules.requestStart(.individual, current: approved(.individual), app: app) == .answerApproved)
    }

    @Test func aChildRequestApprovedInAnotherFolderConflicts() {
        let start = AuthorizationRules.requestStart(.child, current: approved(.child, here: false), app: app)
        #expect(start == .refuse(GuardFailure(.authorizationConflict,
            "org.example.Paint is already approved for alice in another folder "
            + "(/home/alice/Applications/org.example.Paint); a parent or guardian must revoke that approval first")))
    }

    @Test func anIndividualRequestApprovedAsAChildConflicts() {
        let start = AuthorizationRules.requestStart(.individual, current: approved(.child), app: app)
        #expect(start == .refuse(GuardFailure(.authorizationConflict,
            "org.example.Paint is already approved for alice as a child; revoke it first")))
    }

    @Test func aChildRequestApprovedAsAnIndividualAsks() {
        #expect(AuthorizationRules.requestStart(.child, current: approved(.individual), app: app) == .ask)
    }

    @Test func aRevokeFindsWhatIsApproved() {
        #expect(AuthorizationRules.revokeStart(current: nil, app: app) == .noEffect)
        #expect(AuthorizationRules.revokeStart(current: RecordedAuthorization(status: .denied, member: .child), app: app) == .noEffect)
        #expect(AuthorizationRules.revokeStart(current: approved(.individual), app: app) == .revokeAtOnce)
        #expect(AuthorizationRules.revokeStart(current: approved(.child), app: app) == .askGuardian)
    }

    @Test func aRevokeFromAnotherFoldersCopyIsRefused() {
        guard case .refuse(let refusal) = AuthorizationRules.revokeStart(current: approved(.child, here: false), app: app) else {
            Issue.record("another folder's copy lifted a child's approval")
            return
        }
        #expect(refusal.error == .authorizationConflict)
        #expect(refusal.message == "org.example.Paint is approved for alice in another folder "
            + "(/home/alice/Applications/org.example.Paint); only that app may ask to lift it")
    }

    @Test func aRevokeWithoutGuardianStopsAtAChildsApprovalMadeMeanwhile() {
        #expect(AuthorizationRules.revokeWithoutGuardian(now: nil, app: app) == nil)
        #expect(AuthorizationRules.revokeWithoutGuardian(now: approved(.individual), app: app) == nil)
        #expect(AuthorizationRules.revokeWithoutGuardian(now: approved(.child), app: app)?.error == .authorizationCanceled)
    }

    @Test func dontAllowDeniesUnlessApprovedMeanwhile() {
        #expect(AuthorizationRules.dontAllow(.request, now: nil, app: app) == .deny(GuardFailure(.authorizationCanceled,
            "Paint was not allowed to provide parental controls", resultingStatus: .denied)))
        #expect(AuthorizationRules.dontAllow(.request, now: approved(.child), app: app) == .approvedMeanwhile(by: "bob"))
        #expect(AuthorizationRules.dontAllow(.revoke, now: approved(.child), app: app)
                == .keepApproval(GuardFailure(.authorizationCanceled, "the approval of Paint stays")))
    }

    @Test func aGuardiansNoDeniesTheRequestAndKeepsTheApproval() {
        #expect(AuthorizationRules.guardianDecided(.request, approve: true, by: "bob", app: app) == nil)
        #expect(AuthorizationRules.guardianDecided(.revoke, approve: true, by: "bob", app: app) == nil)
        let denied = AuthorizationRules.guardianDecided(.request, approve: false, by: "bob", app: app)
        #expect(denied == GuardFailure(.authorizationCanceled, "Paint was not allowed to provide parental controls (by bob)",
                                  resultingStatus: .denied))
        let kept = AuthorizationRules.guardianDecided(.revoke, approve: false, by: "bob", app: app)
        #expect(kept?.resultingStatus == nil)
        #expect(kept?.message == "the approval of Paint stays (decided by bob)")
    }

    @Test func cancelAndExpiryChangeNothing() {
        #expect(AuthorizationRules.ended(timedOut: false) == GuardFailure(.authorizationCanceled, "the request was canceled"))
        #expect(AuthorizationRules.ended(timedOut: true).message == "the request was timed out")
        let expired = AuthorizationRules.expired(after: "15 minutes")
        #expect(expired.resultingStatus == nil)
        #expect(expired.message == "no parent or guardian decided within 15 minutes; ask again")
    }
}

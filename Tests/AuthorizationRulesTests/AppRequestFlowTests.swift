import AuthorizationRules
import FamilyControlsModel
import GuardProtocol
import Testing

/// The sequence both Guards run (`AppRequestFlow`), over scripted steps: what
/// is recorded, how the people answer, and the steps it took, in order. The
/// Guard's end-to-end tests show the steps are real; these show the order and
/// the branches, each on its own.
@Suite struct AppRequestFlowTests {
    @Test func aChildsRequestGoesFromTheAlertToAGuardianWhoseOwnDecisionIsTheRecord() throws {
        let steps = ScriptedSteps(alerts: [.allow], verdict: .approved)
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken == ["admit child", "update?", "recorded", "folder of another app?", "turn request",
                                "admit child", "update?", "recorded", "folder of another app?", "quota request",
                                "configured?", "note started child",
                                "alert “Allow “Example” to provide parental controls for kid?”",
                                "guardian request"])
    }

    @Test func dontAllowDeniesTheRequestInTheShortSave() {
        let steps = ScriptedSteps(alerts: [.refuse])
        let refusal = #expect(throws: GuardFailure.self) { try AppRequestFlow(.request(.child), steps: steps).run() }
        #expect(refusal?.error == .authorizationCanceled)
        #expect(refusal?.resultingStatus == .denied)
        // Thrown from within the save: nothing after the denial.
        #expect(steps.taken.suffix(3) == ["save", "recorded", "deny child"])
    }

    @Test func dontAllowAfterAnApprovalMadeMeanwhileLeavesItApproved() throws {
        let steps = ScriptedSteps(alerts: [.refuse])
        steps.onAlert = { steps.record = RecordedAuthorization(status: .approved, member: .child, approvedBy: "mum") }
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken.suffix(4) == ["save", "recorded", "note Don't Allow after mum", "saved"])
        #expect(!steps.taken.contains("deny child"))
    }

    @Test func anIndividualAuthenticatesInTheirOwnSheetAndIsApprovedByThemself() throws {
        let steps = ScriptedSteps(alerts: [.allow])
        steps.isChild = false
        #expect(try AppRequestFlow(.request(.individual), steps: steps).run() == .approved)
        #expect(steps.taken.suffix(7) == ["sheet", "alert “Allow “Example” to provide parental controls for you (kid)?”",
                                          "authenticate individual", "sheet ended", "save", "approve individual by kid", "saved"])
    }

    @Test func aChildWithInSessionApprovalAuthenticatesAGuardianInTheApp() throws {
        let steps = ScriptedSteps(alerts: [.allow])
        steps.asksGuardianElsewhere = false
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken.contains("authenticate child"))
        #expect(steps.taken.suffix(3) == ["save", "approve child by mum", "saved"])
        #expect(!steps.taken.contains("guardian request"))
    }

    @Test func anAppApprovedForThisFolderIsAnsweredBeforeItsTurnWithNoAlert() throws {
        let steps = ScriptedSteps()
        steps.record = RecordedAuthorization(status: .approved, member: .child, approvedBy: "mum")
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken == ["admit child", "update?", "recorded", "folder of another app?"])
    }

    @Test func aGuardianHereWhoGoesBackReturnsToTheSameAlertWithTheAttemptsKept() throws {
        let steps = ScriptedSteps(alerts: [.guardianHere, .guardianHere], hereResults: [nil, "dad"])
        steps.offersGuardianCode = true
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken.filter { $0.hasPrefix("alert") || $0.hasPrefix("here") }
                == ["alert offering here “Allow “Example” to provide parental controls for kid?”", "here child attempt 0",
                    "alert offering here “Allow “Example” to provide parental controls for kid?”", "here child attempt 1"])
        #expect(steps.taken.suffix(3) == ["save", "approve child by dad", "saved"])
    }

    @Test func aRevokeOfAChildsApprovalNeverOffersACodeAndAGuardiansNoKeepsIt() {
        let steps = ScriptedSteps(alerts: [.allow], verdict: .denied(by: "mum"))
        steps.offersGuardianCode = true
        steps.record = RecordedAuthorization(status: .approved, member: .child, approvedBy: "mum")
        let refusal = #expect(throws: GuardFailure.self) { try AppRequestFlow(.revoke, steps: steps).run() }
        #expect(refusal?.message == "the approval of Example stays (decided by mum)")
        #expect(steps.taken.contains { $0.hasPrefix("alert “Allow “Example” to stop providing") })
        #expect(!steps.taken.contains("revoke by mum"))
    }

    @Test func aRevokeWithNothingApprovedHasNoEffectAndAsksNoOne() throws {
        let steps = ScriptedSteps()
        #expect(try AppRequestFlow(.revoke, steps: steps).run() == .notDetermined)
        #expect(steps.taken == ["quota revoke", "turn revoke", "recorded", "save", "recorded", "revoke by kid", "saved"])
    }

    @Test func aRevokeFromAnotherFolderIsRefusedAndNoted() {
        let steps = ScriptedSteps()
        steps.record = RecordedAuthorization(status: .approved, member: .child, isThisFolder: false, folder: "/elsewhere")
        let refusal = #expect(throws: GuardFailure.self) { try AppRequestFlow(.revoke, steps: steps).run() }
        #expect(refusal?.error == .authorizationConflict)
        #expect(steps.taken.last == "note revoke refused: asked by a copy of the app in another folder")
    }

    @Test func aMovedFlatpakAppAtACommitOnlyAGuardianLetsInWaitsForThem() throws {
        let steps = ScriptedSteps()
        steps.update = "0123abcd"
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken == ["admit child", "update?", "turn request", "admit child", "update?", "update 0123abcd"])
    }

    @Test func theAdministratorsApprovalIsAppliedInTheTurnWithNoAlert() throws {
        let steps = ScriptedSteps()
        steps.configured = true
        #expect(try AppRequestFlow(.request(.child), steps: steps).run() == .approved)
        #expect(steps.taken.last == "configured?")
    }

    @Test func noGuardianInTimeExpiresNamingTheWait() {
        let steps = ScriptedSteps(alerts: [.allow], verdict: .expired(after: "15 minutes"))
        let refusal = #expect(throws: GuardFailure.self) { try AppRequestFlow(.request(.child), steps: steps).run() }
        #expect(refusal?.message == "no parent or guardian decided within 15 minutes; ask again")
        #expect(!steps.taken.contains { $0.hasPrefix("approve") || $0.hasPrefix("deny") })
    }

    @Test func anAppThatHungUpBeforeItsRequestStartedIsCanceledUntouched() {
        let steps = ScriptedSteps()
        steps.hasHungUp = true
        #expect(throws: GuardFailure.self) { try AppRequestFlow(.request(.child), steps: steps).run() }
        #expect(steps.taken.isEmpty)
    }

    @Test func aRefusedAdmissionEndsTheRequestBeforeAnythingIsRead() {
        let steps = ScriptedSteps()
        steps.isChild = false
        let refusal = #expect(throws: GuardFailure.self) { try AppRequestFlow(.request(.child), steps: steps).run() }
        #expect(refusal?.error == .invalidAccountType)
        #expect(steps.taken == ["admit child"])
    }
}

/// A Guard's steps, scripted, each recorded in `taken` as it runs.
private final class ScriptedSteps: AppRequestSteps {
    typealias Update = String
    typealias InPersonAttempts = Int

    let app = AskingApp(user: "kid", appID: "org.example.App", displayName: "Example")
    var hasHungUp = false
    var asksGuardianElsewhere = true
    var offersGuardianCode = false
    var isChild = true
    var record: RecordedAuthorization?
    var update: String?
    var configured = false
    var alerts: [AlertResponse]
    var hereResults: [String?]
    var verdict: GuardianVerdict
    var onAlert: () -> Void = {}
    var taken: [String] = []

    init(alerts: [AlertResponse] = [], hereResults: [String?] = [], verdict: GuardianVerdict = .canceled) {
        self.alerts = alerts
        self.hereResults = hereResults
        self.verdict = verdict
    }

    func admit(_ member: FamilyControlsMember) throws(GuardFailure) {
        taken.append("admit \(member)")
        if let refusal = AuthorizationRules.admission(member, isChild: isChild, app: app) { throw refusal }
    }

    func pendingUpdate() -> String? {
        taken.append("update?")
        return update
    }

    func awaitUpdate(_ update: String) -> AuthorizationStatus {
        taken.append("update \(update)")
        return .approved
    }

    func recorded() -> RecordedAuthorization? {
        taken.append("recorded")
        return record
    }

    func refuseFolderOfAnotherApp() { taken.append("folder of another app?") }

    func checkQuota(_ purpose: AuthorizationRules.Purpose, _ member: FamilyControlsMember?) {
        taken.append("quota \(purpose)")
    }

    func approvedByConfiguration() -> Bool {
        taken.append("configured?")
        return configured
    }

    func inTurn(_ purpose: AuthorizationRules.Purpose,
                _ body: () throws(GuardFailure) -> AuthorizationStatus) throws(GuardFailure) -> AuthorizationStatus {
        taken.append("turn \(purpose)")
        return try body()
    }

    func saving<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        taken.append("save")
        let result = try body()
        taken.append("saved")
        return result
    }

    func askAlert(_ question: String, member: FamilyControlsMember,
                  offeringGuardianHere: Bool) throws(GuardFailure) -> AlertResponse {
        taken.append("alert \(offeringGuardianHere ? "offering here " : "")“\(question)”")
        onAlert()
        guard !alerts.isEmpty else { throw .canceled("no answer scripted") }
        return alerts.removeFirst()
    }

    func inPersonAttempts() -> Int { 0 }

    func guardianHere(_ member: FamilyControlsMember, attempts: inout Int) throws(GuardFailure) -> String? {
        taken.append("here \(member) attempt \(attempts)")
        attempts += 1
        guard !hereResults.isEmpty else { throw .canceled("no code scripted") }
        return hereResults.removeFirst()
    }

    func withSheet<R>(_ body: () throws(GuardFailure) -> R) throws(GuardFailure) -> R {
        taken.append("sheet")
        let result = try body()
        taken.append("sheet ended")
        return result
    }

    func authenticateInSession(_ member: FamilyControlsMember) -> String {
        taken.append("authenticate \(member)")
        return member == .child ? "mum" : app.user
    }

    func awaitGuardian(_ purpose: AuthorizationRules.Purpose) -> GuardianVerdict {
        taken.append("guardian \(purpose)")
        return verdict
    }

    func approve(_ member: FamilyControlsMember, by approver: String) { taken.append("approve \(member) by \(approver)") }
    func deny(_ member: FamilyControlsMember) { taken.append("deny \(member)") }
    func revoke(by actor: String) { taken.append("revoke by \(actor)") }

    func note(_ note: AppRequestNote) {
        switch note {
        case .started(let member): taken.append("note started \(member)")
        case .revokeRefused(let why): taken.append("note revoke refused: \(why)")
        case .dontAllowAfterApproval(let approver): taken.append("note Don't Allow after \(approver ?? "nobody")")
        }
    }
}

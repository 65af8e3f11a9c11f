import FamilyControls
import FamilyControlsTesting
import SampleApp
import Testing

/// A sample app's view-model tests, as an app developer writes them with the
/// in-memory Guard: every status, every error code, outside changes and revokes.
@MainActor @Suite struct ScreenTimeModelTests {
    @Test func theScreenStartsUndecided() {
        let model = ScreenTimeModel(center: InMemoryGuard().center)
        #expect(model.status == .notDetermined)
        #expect(model.access == .unknown)
        #expect(model.statusText == "Screen Time access has not been set up.")
    }

    @Test(arguments: [
        (Answer.approve, AuthorizationStatus.approved, ScreenTimeModel.Access.granted),
        (.deny, .denied, .blocked),
        (.cancel, .notDetermined, .unknown),
    ])
    func eachAnswerShowsItsStatus(answer: Answer, status: AuthorizationStatus, access: ScreenTimeModel.Access) async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(answer)
        let model = ScreenTimeModel(center: familyGuard.center)
        await model.requestAccess()
        await familyGuard.settle()
        #expect(model.status == status)
        #expect(model.access == access)
        #expect(!model.isWorking)
        let refused = answer == .deny || answer == .cancel
        #expect(model.lastError == (refused ? .authorizationCanceled : nil))
        #expect(model.alert == (refused ? "The request was canceled." : nil))
    }

    @Test(arguments: FamilyControlsError.allCases)
    func everyErrorShowsItsMessage(error: FamilyControlsError) async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.fail(error))
        let model = ScreenTimeModel(center: familyGuard.center)
        await model.requestAccess()
        await familyGuard.settle()
        #expect(model.lastError == error)
        #expect(model.alert == ScreenTimeModel.message(for: error))
        #expect(model.status == .notDetermined)
        #expect(familyGuard.requests == [.individual])
    }

    @Test func aGuardiansChangesReachTheScreen() async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.approve)
        let model = ScreenTimeModel(center: familyGuard.center)
        await model.requestAccess()
        await familyGuard.settle()
        #expect(model.status == .approved)
        for status in [AuthorizationStatus.denied, .approved, .notDetermined] {
            await familyGuard.setStatus(status)
            #expect(model.status == status)
            #expect(model.access == ScreenTimeModel.Access(expected: status))
        }
        #expect(model.changes == 4)
    }

    @Test func theButtonIsBusyWhileTheSheetIsOpen() async throws {
        let familyGuard = InMemoryGuard()
        let model = ScreenTimeModel(center: familyGuard.center)
        let tapped = Task { await model.requestAccess() }
        let sheet = try await familyGuard.nextSheet()
        #expect(sheet.purpose == .request(.individual))
        #expect(model.isWorking)
        sheet.answer(.approve)
        await tapped.value
        #expect(!model.isWorking)
        #expect(model.access == .granted)
    }

    @Test func revokingGoesBackToUndecided() async throws {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.approve)
        let model = ScreenTimeModel(center: familyGuard.center)
        await model.requestAccess()
        model.revokeAccess()
        #expect(model.isWorking)
        _ = try await model.$isWorking.firstValue { !$0 }
        await familyGuard.settle()
        #expect(model.status == .notDetermined)
        #expect(model.alert == nil)
        #expect(familyGuard.revocations == 1)
    }

    @Test func aGuardianWhoRefusesTheRevokeLeavesTheAppApproved() async throws {
        let familyGuard = InMemoryGuard(user: .child)
        familyGuard.willAnswer(.approve, .deny)
        let model = ScreenTimeModel(center: familyGuard.center, member: .child)
        await model.requestAccess()
        model.revokeAccess()
        _ = try await model.$isWorking.firstValue { !$0 }
        await familyGuard.settle()
        #expect(model.status == .approved)
        #expect(model.lastError == .authorizationCanceled)
        #expect(familyGuard.storedStatus == .approved)
    }

    @Test func anAppApprovedInAnEarlierRunIsApprovedAgainWithoutASheet() async {
        let familyGuard = InMemoryGuard(user: .individual, status: .approved)
        let model = ScreenTimeModel(center: familyGuard.center)
        #expect(model.status == .notDetermined)
        await model.requestAccess()
        await familyGuard.settle()
        #expect(model.status == .approved)
    }
}

extension ScreenTimeModel.Access {
    /// What the screen should offer for `status`, written out for the test.
    init(expected status: AuthorizationStatus) {
        switch status {
        case .notDetermined: self = .unknown
        case .denied: self = .blocked
        case .approved: self = .granted
        case .approvedWithDataAccess: self = .grantedWithActivityData
        }
    }
}

import FamilyControls
import FamilyControlsTesting
import Foundation
import Testing

/// The center's rules, driven through the in-memory Guard an app's tests use:
/// every answer, every error code, outside changes, and revokes.
@Suite struct InMemoryGuardTests {
    @Test func anApprovalSetsTheStatusThenOutsideChangesFollow() async throws {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.approve)
        let center = familyGuard.center
        #expect(center.authorizationStatus == .notDetermined)
        try await center.requestAuthorization(for: .individual)
        #expect(center.authorizationStatus == .approved)
        #expect(familyGuard.storedStatus == .approved)
        #expect(familyGuard.requests == [.individual])
        await familyGuard.setStatus(.denied)
        #expect(center.authorizationStatus == .denied)
    }

    @Test func dontAllowLeavesDeniedThrowsCanceledAndFollowsNothing() async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.deny)
        await #expect(throws: FamilyControlsError.authorizationCanceled) {
            try await familyGuard.center.requestAuthorization(for: .child)
        }
        #expect(familyGuard.center.authorizationStatus == .denied)
        #expect(familyGuard.storedStatus == .denied)
        // Only a successful request makes the center follow the Guard.
        await familyGuard.setStatus(.approved)
        #expect(familyGuard.center.authorizationStatus == .denied)
    }

    @Test func aCanceledSheetChangesNothing() async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.cancel)
        await #expect(throws: FamilyControlsError.authorizationCanceled) {
            try await familyGuard.center.requestAuthorization(for: .child)
        }
        #expect(familyGuard.center.authorizationStatus == .notDetermined)
        #expect(familyGuard.storedStatus == .notDetermined)
        #expect(familyGuard.center.lastErrorMessage == "the request was canceled")
    }

    @Test(arguments: FamilyControlsError.allCases)
    func everyErrorCodeReachesTheApp(error: FamilyControlsError) async {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.fail(error))
        let thrown = await #expect(throws: FamilyControlsError.self) {
            try await familyGuard.center.requestAuthorization(for: .individual)
        }
        #expect(thrown == error)
        #expect((thrown as NSError?)?.code == error.rawValue)
        #expect(familyGuard.center.lastErrorMessage == error.errorDescription)
        #expect(familyGuard.center.authorizationStatus == .notDetermined)
    }

    @Test func aStoredApprovalAnswersAtOnceWithoutASheet() async throws {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        #expect(familyGuard.center.authorizationStatus == .notDetermined)
        try await familyGuard.center.requestAuthorization(for: .child)
        #expect(familyGuard.center.authorizationStatus == .approved)
        #expect(familyGuard.requests == [.child])
    }

    @Test func aRequestWaitsAtTheSheetUntilTheTestAnswers() async throws {
        let familyGuard = InMemoryGuard()
        let center = familyGuard.center
        let request = Task { try await center.requestAuthorization(for: .child) }
        let sheet = try await familyGuard.nextSheet()
        #expect(sheet.purpose == .request(.child))
        #expect(center.authorizationStatus == .notDetermined)
        sheet.answer(.approve)
        sheet.answer(.deny)  // ignored: a sheet takes one answer
        try await request.value
        #expect(center.authorizationStatus == .approved)
    }

    @Test func waitingForASheetNobodyOpensTimesOut() async {
        let familyGuard = InMemoryGuard()
        await #expect(throws: TimedOut.self) {
            _ = try await familyGuard.nextSheet(timeout: .milliseconds(100))
        }
    }

    @Test func anIndividualsRevokeResetsTheStatusAndEndsFollowing() async throws {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.approve)
        let center = familyGuard.center
        try await center.requestAuthorization(for: .individual)
        try await revoke(center)
        #expect(center.authorizationStatus == .notDetermined)
        #expect(familyGuard.storedStatus == .notDetermined)
        #expect(familyGuard.revocations == 1)
        await familyGuard.setStatus(.approved)
        #expect(center.authorizationStatus == .notDetermined)
    }

    @Test func aChildsRevokeNeedsTheGuardian() async throws {
        let familyGuard = InMemoryGuard(user: .child)
        familyGuard.willAnswer(.approve, .deny)
        let center = familyGuard.center
        try await center.requestAuthorization(for: .child)
        await #expect(throws: FamilyControlsError.authorizationCanceled) { try await revoke(center) }
        #expect(center.authorizationStatus == .approved)
        let revoking = Task { try await revoke(center) }
        let sheet = try await familyGuard.nextSheet()
        #expect(sheet.purpose == .revoke)
        sheet.answer(.approve)
        try await revoking.value
        #expect(center.authorizationStatus == .notDetermined)
    }

    @Test func revokingADeniedAppCompletesWithNoEffect() async throws {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.deny)
        let center = familyGuard.center
        try? await center.requestAuthorization(for: .child)
        try await revoke(center)
        #expect(center.authorizationStatus == .denied)
        #expect(familyGuard.storedStatus == .denied)
    }

    @Test func aGuardThatIsNotRunningIsUnavailable() async {
        let familyGuard = InMemoryGuard()
        familyGuard.isRunning = false
        await #expect(throws: FamilyControlsError.unavailable) {
            try await familyGuard.center.requestAuthorization(for: .child)
        }
        await #expect(throws: FamilyControlsError.unavailable) { try await revoke(familyGuard.center) }
    }

    @Test func theWrongKindOfAccountAndAConflictAreRefused() async throws {
        let child = InMemoryGuard(user: .child)
        await #expect(throws: FamilyControlsError.invalidAccountType) {
            try await child.center.requestAuthorization(for: .individual)
        }
        let adult = InMemoryGuard(user: .individual)
        await #expect(throws: FamilyControlsError.invalidAccountType) {
            try await adult.center.requestAuthorization(for: .child)
        }
        let either = InMemoryGuard(status: .approved)
        await #expect(throws: FamilyControlsError.authorizationConflict) {
            try await either.center.requestAuthorization(for: .individual)
        }
    }

    @MainActor @Test func objectWillChangeFiresOnTheMainActorBeforeTheStatusChanges() async throws {
        let familyGuard = InMemoryGuard()
        familyGuard.willAnswer(.approve)
        let center = familyGuard.center
        var seenBefore: [AuthorizationStatus] = []
        let subscription = center.objectWillChange.sink {
            seenBefore.append(center.authorizationStatus)
        }
        try await center.requestAuthorization(for: .child)
        await familyGuard.setStatus(.denied)
        #expect(seenBefore == [.notDetermined, .approved])
        withExtendedLifetime(subscription) {}
    }

    // The in-memory Guard decides by the Guard's own rules (AuthorizationRules).

    @Test func dontAllowAfterAnApprovalMadeMeanwhileLeavesItApproved() async throws {
        let familyGuard = InMemoryGuard(user: .child)
        let center = familyGuard.center
        let requesting = Task { try await center.requestAuthorization(for: .child) }
        let sheet = try await familyGuard.nextSheet()
        await familyGuard.setStatus(.approved)      // a guardian runs familyctl set while the alert is open
        sheet.answer(.deny)
        try await requesting.value
        #expect(familyGuard.storedStatus == .approved)
        #expect(center.authorizationStatus == .approved)
    }

    @Test func anIndividualRequestOverAChildsApprovalConflictsAsWithTheGuard() async {
        let familyGuard = InMemoryGuard(status: .approved)
        await #expect(throws: FamilyControlsError.authorizationConflict) {
            try await familyGuard.center.requestAuthorization(for: .individual)
        }
        #expect(familyGuard.center.lastErrorMessage == "the app is already approved for the user as a child; revoke it first")
        #expect(familyGuard.storedStatus == .approved)
    }

    @Test func aGuardiansNoToARevokeKeepsTheApprovalAsWithTheGuard() async throws {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        familyGuard.willAnswer(.deny)
        await #expect(throws: FamilyControlsError.authorizationCanceled) { try await revoke(familyGuard.center) }
        #expect(familyGuard.center.lastErrorMessage == "the approval of the app stays (decided by the guardian)")
        #expect(familyGuard.storedStatus == .approved)
    }
}

/// `revokeAuthorization`, awaited.
private func revoke(_ center: AuthorizationCenter) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        center.revokeAuthorization { continuation.resume(with: $0) }
    }
}

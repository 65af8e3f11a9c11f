import FamilyControls
import FamilyControlsTesting
import Foundation
import Testing

/// The tests that use `AuthorizationCenter.shared`, one at a time: some of
/// them point it at an in-memory Guard, which every other reader would see.
@Suite(.serialized) enum SharedCenterTests {}

extension SharedCenterTests {
    @Suite struct InMemorySharedCenterTests {
        @Test func theSharedCenterTalksToTheInMemoryGuardThenComesBackFresh() async throws {
            try await InMemoryGuard.withSharedCenter(user: .child) { familyGuard in
                #expect(familyGuard.center === AuthorizationCenter.shared)
                familyGuard.willAnswer(.approve)
                try await AuthorizationCenter.shared.requestAuthorization(for: .child)
                #expect(AuthorizationCenter.shared.authorizationStatus == .approved)
                await familyGuard.setStatus(.denied)
                #expect(AuthorizationCenter.shared.authorizationStatus == .denied)
            }
            #expect(AuthorizationCenter.shared.authorizationStatus == .notDetermined)
            #expect(AuthorizationCenter.shared.lastErrorMessage == nil)
        }

        @Test func aSheetLeftOpenIsCanceledWhenTheSharedCenterIsGivenBack() async throws {
            let request = try await InMemoryGuard.withSharedCenter { familyGuard in
                let request = Task { try await AuthorizationCenter.shared.requestAuthorization(for: .individual) }
                _ = try await familyGuard.nextSheet()
                return request
            }
            await #expect(throws: FamilyControlsError.authorizationCanceled) { try await request.value }
            // The answer came after the center was given back: it changes nothing.
            #expect(AuthorizationCenter.shared.authorizationStatus == .notDetermined)
        }

        @Test func anErrorInTheBodyStillGivesTheSharedCenterBack() async {
            struct Stop: Error {}
            await #expect(throws: Stop.self) {
                try await InMemoryGuard.withSharedCenter(status: .approved) { familyGuard in
                    familyGuard.willAnswer(.approve)
                    try await AuthorizationCenter.shared.requestAuthorization(for: .child)
                    throw Stop()
                }
            }
            #expect(AuthorizationCenter.shared.authorizationStatus == .notDetermined)
        }
    }
}

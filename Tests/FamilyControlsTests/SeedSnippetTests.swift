import FamilyControls
import Foundation
import Testing

// Apple's reference snippets, as written there, compiled against the library.
// (Only `import Combine`/SwiftUI lines are absent: Linux has neither; and the
// status switch handles the case Apple's SDK 26.4 added.)

@available(*, deprecated, message: "Apple's snippets as written, including the child-only request deprecated since iOS 16")
@MainActor
private func seedSnippets() -> AnyCancellable {
    let center = AuthorizationCenter.shared

    center.requestAuthorization { result in
        switch result {
        case .success():
            // The request succeeded.
            break
        case .failure(let error):
            // Handle the error here.
            _ = error
        }
    }

    Task {
        do {
            try await center.requestAuthorization(for: FamilyControlsMember.individual)
        } catch {
            // Handle the error here.
        }
    }

    center.revokeAuthorization { result in
        _ = result
    }

    let cancellable = center.$authorizationStatus
        .sink() {
            switch center.authorizationStatus {
            case .notDetermined:
                // Handle the change to notDetermined.
                break
            case .denied:
                // Handle the change to denied.
                break
            case .approved:
                // Handle the change to approved.
                break
            case .approvedWithDataAccess:
                // Not in the reference text: Apple's SDK 26.4 added this case, and
                // rejects the three-case switch as written just as this package does.
                break
            }
        }
    return cancellable
}

extension SharedCenterTests {
    @Suite struct SeedSnippetTests {
        /// The snippets compile (above); the test checks the sink runs at once with the
        /// initial status, as a Combine subscription to `@Published` does.
        @MainActor @Test func sinkDeliversTheInitialStatusAtOnce() {
            var seen: [AuthorizationStatus] = []
            let cancellable = AuthorizationCenter.shared.$authorizationStatus.sink { seen.append($0) }
            #expect(seen == [.notDetermined])
            cancellable.cancel()
        }
    }
}

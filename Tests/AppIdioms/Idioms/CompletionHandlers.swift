// Completion handlers as Apple declares them, plain `@escaping`: closures that
// are not Sendable, touching main-actor state or captured mutable objects.
import FamilyControls
import Foundation

@MainActor
final class RevokeViewModel: ObservableObject {
    @Published var message = ""
    private var attempts = 0

    func revoke() {
        attempts += 1
        AuthorizationCenter.shared.revokeAuthorization { result in
            switch result {
            case .success:
                self.message = "Revoked after \(self.attempts) attempts"
            case .failure(let error):
                self.message = error.localizedDescription
            }
        }
    }

    /// Apple's child-only request, deprecated from iOS 16: an app that
    /// supports iOS 15 calls it without a warning, and so does this one.
    func requestForChild() {
        AuthorizationCenter.shared.requestAuthorization { [weak self] result in
            switch result {
            case .success: self?.message = "Approved"
            case .failure(let error): self?.message = "\(error)"
            }
        }
    }
}

/// A mutable object captured by the handler, from code on no actor.
final class RevokeCounter {
    var completed = 0
    var failures: [any Error] = []

    func revoke(center: AuthorizationCenter = .shared) {
        center.revokeAuthorization { result in
            self.completed += 1
            if case .failure(let error) = result { self.failures.append(error) }
        }
    }
}

/// A callback-based wrapper, as a permissions library offers to its users.
func revokeScreenTime(completion: @escaping (Bool) -> Void) {
    var attempts = 0
    attempts += 1
    AuthorizationCenter.shared.revokeAuthorization { result in
        attempts += 1
        completion((try? result.get()) != nil)
    }
}

/// The handler wrapped into async/await.
func revokeAsync() async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        AuthorizationCenter.shared.revokeAuthorization { continuation.resume(with: $0) }
    }
}

// A permissions library: a protocol over the center, for mocking, and a
// permission type mapping Apple's statuses and errors, newer SDK cases included.
import FamilyControls
import Foundation

/// What the library needs from the center; the real one conforms as Apple declares it.
protocol AuthorizationCentering: AnyObject, Sendable {
    var authorizationStatus: AuthorizationStatus { get }
    func requestAuthorization(for member: FamilyControlsMember) async throws
    func revokeAuthorization(completionHandler: @escaping (Result<Void, any Error>) -> Void)
}

extension AuthorizationCenter: AuthorizationCentering {}

enum PermissionState: Equatable {
    case notDetermined, denied, authorized, limited
}

final class ScreenTimePermission {
    let center: any AuthorizationCentering

    init(center: any AuthorizationCentering = AuthorizationCenter.shared) {
        self.center = center
    }

    var state: PermissionState {
        switch center.authorizationStatus {
        case .notDetermined: .notDetermined
        case .denied: .denied
        case .approved: .limited
        case .approvedWithDataAccess: .authorized
        @unknown default: .notDetermined
        }
    }

    func request(completion: @escaping (PermissionState) -> Void) {
        let center = self.center
        Task { @MainActor in
            do {
                try await center.requestAuthorization(for: .individual)
            } catch {
                print(Self.describe(error))
            }
            completion(ScreenTimePermission(center: center).state)
        }
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? FamilyControlsError else { return "\(error)" }
        switch error {
        case .restricted, .unavailable, .invalidAccountType, .invalidArgument:
            return "not possible here (\(error.rawValue))"
        case .authorizationConflict, .authorizationCanceled, .networkError, .authenticationMethodUnavailable:
            return "try again (\(error.rawValue))"
        case .unauthorized:
            return "needs data access"
        @unknown default:
            return "unknown"
        }
    }

    static func isError(_ error: any Error, _ code: FamilyControlsError) -> Bool {
        let bridged = error as NSError
        return bridged.domain == "FamilyControls.FamilyControlsError" && bridged.code == code.rawValue
    }
}

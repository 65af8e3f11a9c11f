// Reads of authorizationStatus from code on no actor: a React Native bridge
// module, a permissions library, plain helpers. Apple's class belongs to no
// actor, so these compile against its declarations in Swift 5 and 6 modes.
import FamilyControls
import Foundation

/// Promise callbacks as a React Native bridge receives them.
typealias PromiseResolve = @Sendable (Any?) -> Void
typealias PromiseReject = @Sendable (String, String, (any Error)?) -> Void

/// A React Native bridge module: a plain `NSObject` subclass whose methods the
/// JavaScript side calls on a queue of the bridge's.
final class ScreenTimeBridgeModule: NSObject {
    static func moduleName() -> String { "ScreenTime" }

    func constantsToExport() -> [String: Any] {
        ["initialStatus": AuthorizationCenter.shared.authorizationStatus.rawValue]
    }

    func getAuthorizationStatus(_ resolve: @escaping PromiseResolve, rejecter reject: @escaping PromiseReject) {
        resolve(Self.name(of: AuthorizationCenter.shared.authorizationStatus))
    }

    func isAuthorized() -> Bool {
        AuthorizationCenter.shared.authorizationStatus == .approved
    }

    func requestAuthorization(_ member: String, resolver resolve: @escaping PromiseResolve,
                              rejecter reject: @escaping PromiseReject) {
        let member: FamilyControlsMember = member == "child" ? .child : .individual
        Task {
            do {
                try await AuthorizationCenter.shared.requestAuthorization(for: member)
                resolve(Self.name(of: AuthorizationCenter.shared.authorizationStatus))
            } catch let error as FamilyControlsError {
                reject("E_FAMILY_CONTROLS_\(error.rawValue)", error.localizedDescription, error)
            } catch {
                reject("E_UNKNOWN", error.localizedDescription, error)
            }
        }
    }

    func revokeAuthorization(_ resolve: @escaping PromiseResolve, rejecter reject: @escaping PromiseReject) {
        AuthorizationCenter.shared.revokeAuthorization { result in
            switch result {
            case .success: resolve(nil)
            case .failure(let error): reject("E_REVOKE", error.localizedDescription, error)
            }
        }
    }

    static func name(of status: AuthorizationStatus) -> String {
        switch status {
        case .notDetermined: "notDetermined"
        case .denied: "denied"
        case .approved: "approved"
        case .approvedWithDataAccess: "approvedWithDataAccess"
        @unknown default: "unknown"
        }
    }
}

/// Helpers on no actor, as a utility file has them.
enum ScreenTimeStatus {
    static var isApproved: Bool {
        let status = AuthorizationCenter.shared.authorizationStatus
        return status == .approved || status == .approvedWithDataAccess
    }

    static func snapshot(of center: AuthorizationCenter = .shared) -> [String: Int] {
        ["status": center.authorizationStatus.rawValue]
    }
}

/// A stored property initialized from the status, in a class on no actor.
final class LaunchState {
    let statusAtLaunch = AuthorizationCenter.shared.authorizationStatus
    var lastSeen: AuthorizationStatus = .notDetermined

    func refresh() {
        lastSeen = AuthorizationCenter.shared.authorizationStatus
    }
}

/// A struct with a computed property, as an analytics payload has it.
struct AnalyticsEvent {
    var name: String
    var authorization: String { "\(AuthorizationCenter.shared.authorizationStatus)" }
}

/// A read from a background queue and from a thread.
func logStatusInBackground() {
    DispatchQueue.global(qos: .utility).async {
        print("status:", AuthorizationCenter.shared.authorizationStatus)
    }
    Thread {
        _ = AuthorizationCenter.shared.authorizationStatus
    }.start()
}

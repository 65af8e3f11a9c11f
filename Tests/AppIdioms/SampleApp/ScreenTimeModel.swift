import FamilyControls
import Foundation

/// The view model of a small screen-time app's settings screen, written the
/// way such apps write it: an `ObservableObject` on the main actor, its own
/// `@Published` properties fed from `$authorizationStatus`, and a completion
/// handler for the revoke. `SampleAppTests` drives it with the in-memory Guard.
@MainActor
public final class ScreenTimeModel: ObservableObject {
    /// What the screen offers, from the status.
    public enum Access: Equatable, Sendable {
        case unknown, blocked, granted, grantedWithActivityData

        init(_ status: AuthorizationStatus) {
            switch status {
            case .notDetermined: self = .unknown
            case .denied: self = .blocked
            case .approved: self = .granted
            case .approvedWithDataAccess: self = .grantedWithActivityData
            }
        }
    }

    @Published public private(set) var status: AuthorizationStatus = .notDetermined
    @Published public private(set) var access: Access = .unknown
    @Published public private(set) var isWorking = false
    @Published public private(set) var alert: String?
    @Published public private(set) var lastError: FamilyControlsError?
    /// How many times the status changed after the screen opened.
    @Published public private(set) var changes = 0

    private let center: AuthorizationCenter
    private let member: FamilyControlsMember
    private var subscriptions = Set<AnyCancellable>()

    public init(center: AuthorizationCenter = .shared, member: FamilyControlsMember = .individual) {
        self.center = center
        self.member = member
        center.$authorizationStatus
            .receive(on: DispatchQueue.main)
            .sink { [weak self] status in self?.status = status }
            .store(in: &subscriptions)
        center.$authorizationStatus
            .map(Access.init)
            .removeDuplicates()
            .assign(to: &$access)
        center.$authorizationStatus
            .dropFirst()
            .removeDuplicates()
            .sink { [weak self] _ in self?.changes += 1 }
            .store(in: &subscriptions)
    }

    public var statusText: String {
        switch status {
        case .notDetermined: "Screen Time access has not been set up."
        case .denied: "A parent or guardian did not allow Screen Time access."
        case .approved: "Screen Time access is on."
        case .approvedWithDataAccess: "Screen Time access is on, with activity data."
        }
    }

    /// The button: asks for authorization and shows what went wrong.
    public func requestAccess() async {
        isWorking = true
        defer { isWorking = false }
        do {
            try await center.requestAuthorization(for: member)
            alert = nil
            lastError = nil
        } catch let error as FamilyControlsError {
            lastError = error
            alert = Self.message(for: error)
        } catch {
            alert = error.localizedDescription
        }
    }

    /// The other button: revokes, with Apple's completion handler.
    public func revokeAccess() {
        isWorking = true
        center.revokeAuthorization { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                self.alert = nil
                self.lastError = nil
            case .failure(let error):
                self.lastError = error as? FamilyControlsError
                self.alert = (error as? FamilyControlsError).map(Self.message) ?? error.localizedDescription
            }
            self.isWorking = false
        }
    }

    public static func message(for error: FamilyControlsError) -> String {
        switch error {
        case .restricted: "Screen Time is restricted on this device."
        case .unavailable: "Screen Time is not available here."
        case .invalidAccountType: "This account cannot use Screen Time controls."
        case .invalidArgument: "The app is not set up for Screen Time."
        case .authorizationConflict: "Another app already manages Screen Time."
        case .authorizationCanceled: "The request was canceled."
        case .networkError: "Check the connection and try again."
        case .authenticationMethodUnavailable: "Set a password first."
        case .unauthorized: "Activity data needs more access."
        }
    }
}

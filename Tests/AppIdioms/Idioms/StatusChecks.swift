// Status checks as apps write them: the three-case switch of Apple's reference
// text, with no `default`, and the newer SDK's `approvedWithDataAccess` in
// comparisons, guards and patterns.
import FamilyControls

enum StatusChecks {
    /// Apple's reference form: exactly three cases, no `default`.
    static func label(of status: AuthorizationStatus) -> String {
        switch status {
        case .notDetermined: "Not set up"
        case .denied: "Blocked"
        case .approved: "On"
        }
    }

    /// Written for Apple's SDK 26.4: the fourth case before the others.
    static func hasActivityData(_ status: AuthorizationStatus) -> Bool {
        switch status {
        case .approvedWithDataAccess: true
        case .notDetermined, .denied, .approved: false
        }
    }

    static func needsActivityDataPrompt(_ status: AuthorizationStatus) -> Bool {
        guard status != .approvedWithDataAccess else { return false }
        if case .approvedWithDataAccess = status { return false }
        return status == .approved
    }

    static func lastKnown(_ status: AuthorizationStatus?) -> Bool {
        status == .approvedWithDataAccess || status != .approvedWithDataAccess && status == .approved
    }

    static func approvedStatuses(among statuses: [AuthorizationStatus]) -> [AuthorizationStatus] {
        statuses.filter { $0 == .approved || $0 == .approvedWithDataAccess }
    }
}

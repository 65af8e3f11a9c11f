import FamilyControlsModel
import GuardProtocol
import Foundation
@testable import GuardKit
import Testing
import TestSupport
import Varlink

@Suite struct GuardInterfaceTests {
    @Test func shippedDescriptionIsWhatTheGuardServes() throws {
        let shipped = try String(contentsOfFile: "\(packageRoot)/Config/org.familycontrols.guard.varlink", encoding: .utf8)
        #expect(shipped == GuardInterface.text)
        let description = try VarlinkInterfaceDescription(GuardInterface.text)
        #expect(description.name == "org.familycontrols.guard")
        #expect(description.methods == ["GetStatus", "Subscribe", "RequestAuthorization", "Answer", "RevokeAuthorization",
                                        "UpdateApp", "ListAuthorizations", "SetStatus", "Revoke", "Graduate", "Forget", "ListRequests",
                                        "WatchRequests", "DecideRequest", "VerifyLocks", "ReadAudit", "EnrollCode",
                                        "RemoveCode", "OpenSession", "CloseSession", "ListSessions",
                                        "ListMonitors", "IdentifyMonitor", "WatchMonitorAlerts", "SetTimeLimits",
                                        "GetTimeLimits", "RequestMoreTime", "ListTimeLimits", "SetChildLimits",
                                        "ClearChildLimits", "GrantMoreTime"])
    }

    @Test func everyErrorTheGuardSendsIsDeclared() {
        let declared = Set(GuardInterface.text.split(separator: "\n")
            .filter { $0.hasPrefix("error ") }
            .compactMap { $0.split(separator: " ").dropFirst().first.map { "org.familycontrols.guard.\($0)" } })
        // The Guard has no data-access calls, so it never sends `unauthorized`.
        var sent = Set(FamilyControlsError.allCases.filter { $0 != .unauthorized }.map(\.varlinkName))
        sent.insert(GuardFailure(.permissionDenied, "").varlinkName)
        sent.insert(GuardFailure(.notFound, "").varlinkName)
        sent.insert(GuardFailure(.limitReached, "").varlinkName)
        #expect(sent == declared)
    }
}

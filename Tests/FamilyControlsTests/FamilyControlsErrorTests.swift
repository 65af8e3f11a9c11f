@testable import FamilyControls
import Foundation
import GuardProtocol
import Testing
import Varlink
import VarlinkClientKit

@Suite struct FamilyControlsErrorTests {
    @Test(arguments: [
        (FamilyControlsError.restricted, 0, "restricted"),
        (.unavailable, 1, "unavailable"),
        (.invalidAccountType, 2, "invalidAccountType"),
        (.invalidArgument, 3, "invalidArgument"),
        (.authorizationConflict, 4, "authorizationConflict"),
        (.authorizationCanceled, 5, "authorizationCanceled"),
        (.networkError, 6, "networkError"),
        (.authenticationMethodUnavailable, 7, "authenticationMethodUnavailable"),
        (.unauthorized, 8, "unauthorized"),
    ])
    func codeDomainAndDescription(error: FamilyControlsError, code: Int, name: String) {
        #expect(error.rawValue == code)
        #expect(error.errorCode == code)
        #expect(FamilyControlsError.errorDomain == "FamilyControls.FamilyControlsError")
        let bridged = error as NSError
        #expect(bridged.domain == "FamilyControls.FamilyControlsError")
        #expect(bridged.code == code)
        let description = error.errorDescription ?? ""
        #expect(description.count > 20)
        #expect(bridged.localizedDescription == description)
        #expect(error.caseName == name)
        #expect(FamilyControlsError(varlinkName: error.varlinkName) == error)
        #expect(error.varlinkName == "org.familycontrols.guard." + name.prefix(1).uppercased() + name.dropFirst())
    }

    @Test func everyDescriptionIsDistinct() {
        let descriptions = FamilyControlsError.allCases.compactMap(\.errorDescription)
        #expect(Set(descriptions).count == FamilyControlsError.allCases.count)
    }

    @Test func statusAndMemberKeepApplesRawValues() throws {
        #expect(AuthorizationStatus.allCases.map(\.rawValue) == [0, 1, 2])
        #expect(AuthorizationStatus.allCases.map(\.description) == ["notDetermined", "denied", "approved"])
        for status in AuthorizationStatus.allCases {
            #expect(AuthorizationStatus(name: status.description) == status)
        }
        #expect(FamilyControlsMember.child.rawValue == 0)
        #expect(FamilyControlsMember.individual.rawValue == 1)
        let encoded = try JSONEncoder().encode([AuthorizationStatus.approved])
        #expect(try JSONDecoder().decode([AuthorizationStatus].self, from: encoded) == [.approved])
    }

    @Test func theNewerSDKsDataAccessStatusMatchesNoStatus() throws {
        for status in AuthorizationStatus.allCases {
            // Written as code for Apple's SDK 26.4 writes them.
            let equal = status == .approvedWithDataAccess
            let equalReversed = .approvedWithDataAccess == status
            let different = status != .approvedWithDataAccess
            let optional: AuthorizationStatus? = status
            let optionalEqual = optional == .approvedWithDataAccess
            #expect(!equal && !equalReversed && !optionalEqual && different, "\(status)")
            let matched: Bool
            switch status {
            case .approvedWithDataAccess: matched = true
            case .notDetermined, .denied, .approved: matched = false
            }
            #expect(!matched, "\(status) matched approvedWithDataAccess")
            if case .approvedWithDataAccess = status { Issue.record("if case matched \(status)") }
        }
        let reserved = AuthorizationStatus.ReservedStatus.approvedWithDataAccess
        #expect(reserved.rawValue == 3)
        #expect(reserved.description == "approvedWithDataAccess")
        // Its raw value and its name are reserved: neither decodes to a status.
        #expect(AuthorizationStatus(rawValue: 3) == nil)
        #expect(AuthorizationStatus(name: "approvedWithDataAccess") == nil)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([AuthorizationStatus].self, from: Data("[3]".utf8))
        }
    }

    /// What the app sees when the Guard answers with one of its errors: the
    /// public case it names, with the Guard's message and the status it left.
    @Test(arguments: FamilyControlsError.allCases.filter { $0 != .unauthorized })
    func aGuardErrorReachesTheAppAsItsCase(error: FamilyControlsError) {
        let sent = GuardFailure(error, "the Guard says why")
        let reply = VarlinkClientError.remote(VarlinkError(name: sent.wire.name, parameters: sent.wire.parameters))
        let received = GuardFailure(reply, connecting: false)
        #expect(received.error == error)
        #expect(received.message == "the Guard says why")
        #expect(((received.error as any Error) as NSError).code == error.rawValue)
    }

    @Test func aDeniedRequestReachesTheAppWithTheDeniedStatus() {
        let sent = GuardFailure(.authorizationCanceled, "not allowed", resultingStatus: .denied)
        let received = GuardFailure(.remote(VarlinkError(name: sent.wire.name, parameters: sent.wire.parameters)),
                                    connecting: false)
        #expect(received.error == .authorizationCanceled)
        #expect(received.resultingStatus == .denied)
    }

    @Test func aReplyThatIsNotTheGuardsIsANetworkErrorNamingIt() {
        let received = GuardFailure(.remote(.methodNotFound("org.familycontrols.guard.Nothing")), connecting: false)
        #expect(received.error == .networkError)
        #expect(received.message == "org.varlink.service.MethodNotFound")
    }

    @Test(arguments: [VarlinkClientError.noSuchSocket("/run/x"), .connectionRefused("/run/x"), .permissionDenied("/run/x"),
                      .connectTimedOut("/run/x")])
    func noGuardToReachIsUnavailable(failure: VarlinkClientError) {
        #expect(GuardFailure(failure, connecting: true).error == .unavailable)
        #expect(GuardFailure(failure, connecting: false).error == .unavailable)
    }

    @Test func aConnectionLostDuringTheRequestIsANetworkError() {
        #expect(GuardFailure(.connectionClosed, connecting: false).error == .networkError)
        #expect(GuardFailure(.connectionClosed, connecting: true).error == .unavailable)
    }
}

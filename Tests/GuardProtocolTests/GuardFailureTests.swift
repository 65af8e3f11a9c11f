import FamilyControlsModel
import GuardProtocol
import Testing
import Varlink

@Suite("GuardFailure, the one failure type, to and from the interface's errors")
struct GuardFailureTests {
    /// Every failure the Guard can send: each kind, and a canceled request
    /// with each status it can leave behind, or none.
    static let sendable: [GuardFailure] =
        FamilyControlsError.allCases.filter { $0 != .unauthorized }.map { GuardFailure($0, "what happened to \($0.caseName)") }
        + [GuardFailure.Kind.permissionDenied, .notFound, .limitReached].map { GuardFailure($0, "refused: \($0)") }
        + AuthorizationStatus.allCases.map { GuardFailure(.authorizationCanceled, "ended as \($0)", resultingStatus: $0) }

    /// The failure as a frame on the socket and back, as a client receives it.
    private func throughTheSocket(_ failure: GuardFailure) throws -> GuardFailure? {
        let frame = VarlinkReply(failure: VarlinkError(name: failure.wire.name, parameters: failure.wire.parameters)).encoded()
        #expect(frame.last == 0)
        let reply = try frame.dropLast().withUnsafeBytes { bytes in try VarlinkReply(parsing: bytes) }
        let remote = try #require(reply.failure)
        return GuardFailure(remote: remote)
    }

    @Test(arguments: sendable)
    func everyFailureTheGuardSendsArrivesAsItWasSent(failure: GuardFailure) throws {
        #expect(failure.wire.name == failure.varlinkName)
        #expect(failure.wire.message == failure.message)
        #expect(GuardFailure(failure.wire) == failure)
        #expect(try throughTheSocket(failure) == failure)
    }

    @Test func theStatusADeniedRequestLeavesTravelsWithTheCancel() throws {
        let denied = GuardFailure(.authorizationCanceled, "the guardian chose Don't Allow", resultingStatus: .denied)
        #expect(denied.wire == .authorizationCanceled(message: "the guardian chose Don't Allow", status: .denied))
        #expect(try throughTheSocket(denied)?.resultingStatus == .denied)
        let canceled = GuardFailure.canceled("the app hung up")
        #expect(canceled.wire == .authorizationCanceled(message: "the app hung up", status: nil))
        #expect(try throughTheSocket(canceled)?.resultingStatus == nil)
    }

    /// The interface declares no `Unauthorized` (the Guard has no data-access calls).
    @Test func unauthorizedTravelsAsInvalidArgumentWhichTheInterfaceDeclares() {
        let failure = GuardFailure(.unauthorized, "no data access")
        #expect(failure.wire == .invalidArgument(message: "no data access"))
        #expect(failure.varlinkName == "org.familycontrols.guard.Unauthorized")
    }

    /// Another Guard (a newer one) may send it all the same: the app sees `unauthorized`.
    @Test func anUnauthorizedReplyIsUnauthorized() throws {
        let failure = try #require(GuardFailure(remote: VarlinkError(name: "org.familycontrols.guard.Unauthorized",
                                                                     parameters: ["message": .string("needs data access")])))
        #expect(failure.kind == .familyControls(.unauthorized))
        #expect(failure.error == .unauthorized)
    }

    @Test func aGuardErrorWithParametersTheInterfaceDoesNotDescribeKeepsItsCaseAndSaysItsName() throws {
        let wrong = try #require(GuardFailure(remote: VarlinkError(name: "org.familycontrols.guard.AuthorizationCanceled",
                                                                   parameters: ["message": .int(5)])))
        #expect(wrong == GuardFailure(.authorizationCanceled, "org.familycontrols.guard.AuthorizationCanceled"))
        let refused = try #require(GuardFailure(remote: VarlinkError(name: "org.familycontrols.guard.PermissionDenied")))
        #expect(refused == GuardFailure(.permissionDenied, "org.familycontrols.guard.PermissionDenied"))
    }

    @Test(arguments: ["org.varlink.service.MethodNotFound", "org.varlink.service.PermissionDenied",
                      "org.familycontrols.guard.NoSuchError", "com.example.Restricted"])
    func anErrorThatIsNotTheGuardsIsNoGuardFailure(name: String) {
        #expect(GuardFailure(remote: VarlinkError(name: name, parameters: ["message": .string("x")])) == nil)
    }

    /// No app call can be refused this way; if one is, the app sees the Guard misbehaving.
    @Test(arguments: [GuardFailure.Kind.permissionDenied, .notFound, .limitReached])
    func anAdministratorsRefusalReachesAnAppAsANetworkError(kind: GuardFailure.Kind) {
        #expect(GuardFailure(kind, "refused").error == .networkError)
    }

    @Test(arguments: FamilyControlsError.allCases)
    func anAppSeesTheCaseTheGuardSent(error: FamilyControlsError) {
        #expect(GuardFailure(error, "m").error == error)
    }
}

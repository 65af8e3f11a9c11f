import PAM
import Testing

/// How a failed PAM code becomes a reason: an unreachable directory
/// (`PAM_AUTHINFO_UNAVAIL`) is told apart from a wrong password only for an
/// account the local shadow database does not hold.
@Suite struct PAMFailureReasonTests {
    @Test func anUnreachableDirectoryForADirectoryAccountIsNotAWrongPassword() {
        let reason = PAMTransaction.reason(for: .authenticationInfoUnavailable, unknownUser: false, shadow: .unknown)
        #expect(reason == .directoryUnavailable)
        let error = PAMError(reason, service: "familycontrols-guardian", user: "teacher")
        #expect(error.publicMessage.contains("directory cannot be reached"))
        #expect(!error.description.contains("incorrect password"))
    }

    @Test(arguments: [ShadowAccount.PasswordState.usable, .locked, .none, .expired])
    func anUnreachableDirectoryAfterALocalPasswordIsStillARefusal(shadow: ShadowAccount.PasswordState) {
        let reason = PAMTransaction.reason(for: .authenticationInfoUnavailable, unknownUser: false, shadow: shadow)
        #expect(reason != .directoryUnavailable)
        #expect(reason != .serviceMisconfigured)
    }

    @Test func anUnreachableDirectoryForANameNoOneHasIsAnUnknownUser() {
        #expect(PAMTransaction.reason(for: .authenticationInfoUnavailable, unknownUser: true, shadow: .unknown) == .unknownUser)
    }

    @Test func aWrongDirectoryPasswordIsAWrongPassword() {
        #expect(PAMTransaction.reason(for: .authenticationError, unknownUser: false, shadow: .unknown) == .authenticationFailed)
    }
}

import FamilyControlsModel
import GuardProtocol
import SystemKit

// A parent or guardian at the child's screen, with their one-time code, for
// a request that is not an approval (more time).
extension AuthorizationPolicy {
    /// Whether a parent or guardian at the child's screen decides: when one
    /// of the child's guardians has enrolled a one-time code, the alert
    /// `question` offers "a parent or guardian is here" beside asking one
    /// elsewhere; the guardian's name, then their current code, are checked
    /// on the code service, as for an approval.
    /// - Returns: the guardian who authenticated there; nil to ask a parent
    ///   or guardian elsewhere (the alert's continue, or no code to offer).
    /// - Throws: `AuthorizationCanceled` at Don't Allow; the sheet's and
    ///   PAM's failures.
    package func guardianAtTheScreen(of caller: Caller, asking question: String,
                                     over channel: any RequestChannel) throws(GuardFailure) -> String? {
        guard offersGuardianCode(to: caller.account.name) else { return nil }
        var attempts = AuthenticationSheet.InPersonAttempts(returnsLeft: limits.returnsToAlertPerRequest)
        while true {
            switch try sheet.askAlert(question, member: .child, caller: caller, channel: channel, offeringGuardianHere: true) {
            case .refuse:
                throw GuardFailure(.authorizationCanceled, "the request was canceled at the alert")
            case .allow:
                return nil
            case .guardianHere:
                let who = AuthenticationSheet.Authentication.inSession(.child, caller)
                let outcome = try sheet.withSheet(of: caller, channel: channel, deadline: turnDeadline) {
                    () throws(GuardFailure) -> AuthenticationSheet.InPersonOutcome in
                    try sheet.checkBackoff(who, channel: channel, configuration: family.configuration)
                    return try sheet.authenticate(who, over: channel, service: family.configuration.guardianCodeService,
                                                  attempts: &attempts)
                }
                if case .authenticated(let guardian) = outcome { return guardian }
            }
        }
    }
}

import GuardProtocol

/// Why a PAM authentication did not succeed, with a message for the
/// administrator (``description``) and one for the person at the prompt
/// (``publicMessage``).
///
/// `publicMessage` never tells "unknown user" from "wrong password", as sudo
/// never does; the log does.
package struct PAMError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why, as the PAM helper's interface names it
    /// (`Config/org.familycontrols.conversation.varlink`, `FailureReason`,
    /// where each case is explained): one list for the helper's wire, the
    /// log and the audit trail.
    package typealias Reason = Conversation.FailureReason

    package var reason: Reason
    /// The service (`familycontrols-guardian`) and user the transaction was for.
    package var service: String
    package var user: String
    /// The libpam code behind the failure, when there was one.
    package var code: PAMResultCode?
    /// What exactly is wrong, for ``Reason/serviceMissing`` and
    /// ``Reason/helperFailed``, or why PAM timed out when no person was asked.
    package var detail: String?

    package init(_ reason: Reason, service: String, user: String, code: PAMResultCode? = nil) {
        self.reason = reason
        self.service = service
        self.user = user
        self.code = code
    }

    /// For the log and the administrator.
    package var description: String {
        let detail = code.map { " [\($0)]" } ?? ""
        let text: String
        switch reason {
        case .authenticationFailed: text = "authentication failure for \(user): incorrect password"
        case .unknownUser: text = "authentication failure: unknown user \(user)"
        case .accountLocked: text = "authentication failure for \(user): the account is locked"
        case .noUsablePassword: text = "authentication failure for \(user): the account has no usable password"
        case .accountExpired: text = "account validation failure for \(user): the account has expired"
        case .passwordExpired: text = "account validation failure for \(user): the password has expired and must be changed"
        case .permissionDenied: text = "account validation failure for \(user): access denied (is the account locked or not allowed here?)"
        case .tooManyTries: text = "authentication failure for \(user): too many tries"
        case .canceled: text = "authentication of \(user) canceled"
        case .timedOut: text = self.detail.map { "authentication of \(user) timed out: \($0)" }
            ?? "authentication of \(user) timed out waiting for an answer"
        case .userChanged: text = "authentication refused: the PAM stack changed the user from \(user)"
        case .serviceMisconfigured: text = "PAM service \(service) failed: check /etc/pam.d/\(service) and the system log"
        case .serviceMissing: text = "PAM service \(service) cannot be used: \(self.detail ?? "no such service") "
            + "(refused rather than letting libpam fall back to the \"other\" service)"
        case .helperFailed: text = "authentication of \(user) failed: \(self.detail ?? "the PAM helper process failed")"
        case .directoryUnavailable:
            text = "authentication of \(user) could not be checked: the user directory (LDAP, SSSD) cannot be reached"
        }
        return "\(service): \(text)\(detail)"
    }

    /// For the person at the prompt: no detail that would tell an unknown user
    /// from a wrong password.
    package var publicMessage: String {
        switch reason {
        case .authenticationFailed, .unknownUser, .accountLocked, .userChanged:
            "Authentication failed."
        case .noUsablePassword:
            "No authentication method is available for this account."
        case .accountExpired, .passwordExpired, .permissionDenied:
            "The account cannot be used to authorize right now; ask an administrator."
        case .tooManyTries:
            "Too many failed attempts."
        case .canceled:
            "Authentication canceled."
        case .timedOut:
            "Authentication timed out."
        case .serviceMisconfigured, .serviceMissing, .helperFailed:
            "Authentication is not available: the system's PAM configuration failed."
        case .directoryUnavailable:
            "The user directory cannot be reached, so the password cannot be checked right now. Try again later."
        }
    }
}

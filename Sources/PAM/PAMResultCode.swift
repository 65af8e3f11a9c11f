import CPAM

/// A libpam return code (`PAM_SUCCESS`, `PAM_AUTH_ERR`, …) with its message.
package struct PAMResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package let rawValue: CInt
    package init(rawValue: CInt) { self.rawValue = rawValue }

    package static let success = PAMResultCode(rawValue: PAM_SUCCESS)
    package static let openError = PAMResultCode(rawValue: PAM_OPEN_ERR)
    package static let symbolError = PAMResultCode(rawValue: PAM_SYMBOL_ERR)
    package static let serviceError = PAMResultCode(rawValue: PAM_SERVICE_ERR)
    package static let systemError = PAMResultCode(rawValue: PAM_SYSTEM_ERR)
    package static let bufferError = PAMResultCode(rawValue: PAM_BUF_ERR)
    package static let permissionDenied = PAMResultCode(rawValue: PAM_PERM_DENIED)
    package static let authenticationError = PAMResultCode(rawValue: PAM_AUTH_ERR)
    package static let credentialsInsufficient = PAMResultCode(rawValue: PAM_CRED_INSUFFICIENT)
    package static let authenticationInfoUnavailable = PAMResultCode(rawValue: PAM_AUTHINFO_UNAVAIL)
    package static let userUnknown = PAMResultCode(rawValue: PAM_USER_UNKNOWN)
    package static let maximumTries = PAMResultCode(rawValue: PAM_MAXTRIES)
    package static let newAuthenticationTokenRequired = PAMResultCode(rawValue: PAM_NEW_AUTHTOK_REQD)
    package static let accountExpired = PAMResultCode(rawValue: PAM_ACCT_EXPIRED)
    package static let conversationError = PAMResultCode(rawValue: PAM_CONV_ERR)
    package static let abort = PAMResultCode(rawValue: PAM_ABORT)

    /// The symbolic name, for logs (`PAM_AUTH_ERR`).
    package var name: String {
        switch self {
        case .success: "PAM_SUCCESS"
        case .openError: "PAM_OPEN_ERR"
        case .symbolError: "PAM_SYMBOL_ERR"
        case .serviceError: "PAM_SERVICE_ERR"
        case .systemError: "PAM_SYSTEM_ERR"
        case .bufferError: "PAM_BUF_ERR"
        case .permissionDenied: "PAM_PERM_DENIED"
        case .authenticationError: "PAM_AUTH_ERR"
        case .credentialsInsufficient: "PAM_CRED_INSUFFICIENT"
        case .authenticationInfoUnavailable: "PAM_AUTHINFO_UNAVAIL"
        case .userUnknown: "PAM_USER_UNKNOWN"
        case .maximumTries: "PAM_MAXTRIES"
        case .newAuthenticationTokenRequired: "PAM_NEW_AUTHTOK_REQD"
        case .accountExpired: "PAM_ACCT_EXPIRED"
        case .conversationError: "PAM_CONV_ERR"
        case .abort: "PAM_ABORT"
        default: "PAM error \(rawValue)"
        }
    }

    /// libpam's own text for the code (`pam_strerror(3)`) where libpam is
    /// loaded (the process that ran the transaction), else the code's name.
    package var description: String {
        guard let text = cpam_strerror(rawValue) else { return name }
        return "\(String(cString: text)) (\(name))"
    }
}

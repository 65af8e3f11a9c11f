import PAM

/// Who checks a password (or whatever the PAM stack asks for): one PAM
/// transaction for `request`, its conversation relayed through `conversation`.
///
/// The Guard runs each in a PAM helper process (``PAMHelperClient``); the
/// policy's unit tests give a scripted one, so its rules run without root.
package protocol Authenticating: Sendable {
    /// Authenticates `request.user` on `request.service`.
    /// - Throws: ``PAMError`` saying why not (a wrong password, a hang-up, a timeout, a broken stack).
    func authenticate(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError)
}

extension PAMHelperClient: Authenticating {
    package func authenticate(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError) {
        try authenticateBlocking(request, conversation: conversation)
    }
}

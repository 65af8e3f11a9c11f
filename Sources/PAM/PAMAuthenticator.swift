import CPAM
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Authenticates a user through PAM: `pam_start_confdir` (or `pam_start`),
/// `pam_authenticate`, `pam_acct_mgmt`, then a check that `PAM_USER` is still
/// the user asked for. Modeled on sudo's `plugins/sudoers/auth/pam.c`.
///
/// PAM blocks while a person types: call it from a thread that may block (a
/// command-line tool's main thread, the PAM helper), never from Swift's
/// cooperative pool. A long-lived process runs it through
/// ``PAMHelperClient`` instead, so no module runs inside it.
package struct PAMAuthenticator: Sendable {
    package init() {}

    /// Runs `request` on the calling thread, which blocks until PAM is done.
    package func authenticateBlocking(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError) {
        try PAMTransaction.run(request, conversation: conversation)
    }
}

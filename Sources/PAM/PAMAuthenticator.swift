import CPAM
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Authenticates a user through PAM: `pam_start_confdir` (or `pam_start`),
/// `pam_authenticate`, `pam_acct_mgmt`, then a check that `PAM_USER` is still
/// the user asked for. Modeled on sudo's `plugins/sudoers/auth/pam.c`.
///
/// Each transaction runs on a thread of its own: PAM blocks while a person
/// types, and must never hold a thread of the cooperative pool.
package struct PAMAuthenticator: Sendable {
    package init() {}

    /// Runs `request` on a new thread and waits for it without blocking the caller's executor.
    /// - Throws: ``PAMError`` for every way it can fail.
    package func authenticate(_ request: PAMRequest, conversation: any PAMConversation) async throws(PAMError) {
        let result: Result<Void, PAMError> = await withCheckedContinuation { continuation in
            let run: @Sendable () -> Void = {
                do throws(PAMError) {
                    try PAMTransaction.run(request, conversation: conversation)
                    continuation.resume(returning: .success(()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            do throws(Errno) {
                try SystemThread.spawn(name: "pam", run).detach()
            } catch {
                continuation.resume(returning: .failure(PAMError(.serviceMisconfigured, service: request.service,
                                                                 user: request.user)))
            }
        }
        try result.get()
    }

    /// Runs `request` on the calling thread, which blocks until PAM is done.
    /// For command-line tools; the Guard uses ``authenticate(_:conversation:)``.
    package func authenticateBlocking(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError) {
        try PAMTransaction.run(request, conversation: conversation)
    }
}

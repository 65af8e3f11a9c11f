/// One authentication to run: who, against which service, on whose behalf.
package struct PAMRequest: Hashable, Sendable {
    /// The pam.d service (`familycontrols-guardian`, `familycontrols-individual`).
    package var service: String
    /// The user who must prove who they are (the guardian, or the individual).
    package var user: String
    /// `PAM_RUSER`: the user on whose behalf the guardian is asked (the child).
    package var requestingUser: String?
    /// `PAM_TTY`: the terminal of the person asked, when known.
    package var tty: String?
    /// A pam.d folder to read instead of `/etc/pam.d` (`pam_start_confdir`).
    package var configurationDirectory: String?
    /// How long one prompt may wait for an answer.
    package var promptTimeout: Duration

    package init(
        service: String, user: String, requestingUser: String? = nil, tty: String? = nil,
        configurationDirectory: String? = nil, promptTimeout: Duration = .seconds(60)
    ) {
        self.service = service
        self.user = user
        self.requestingUser = requestingUser
        self.tty = tty
        self.configurationDirectory = configurationDirectory
        self.promptTimeout = promptTimeout
    }
}

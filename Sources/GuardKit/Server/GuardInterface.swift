/// The Varlink interface the Guard serves. `Config/org.familycontrols.guard.varlink`
/// ships the same text (a test keeps the two identical).
enum GuardInterface {
    static let name = "org.familycontrols.guard"

    static let text = """
    # The FamilyControls Guard: authorizations to provide parental controls.
    #
    # Apps call the methods in the first group; the Guard identifies the calling
    # app from the kernel (the connecting process and the executable it runs),
    # never from the parameters. Administrators (root, or a guardian for their own
    # children) call the second group.
    interface org.familycontrols.guard

    # One authorization, as administrators see it.
    type Authorization (
      user: string,
      app: string,
      member: string,
      status: string,
      approvedBy: ?string,
      updatedAt: float,
      path: string,
      lock: string
    )

    # Something to show the person at the app during a request. kind is one of
    # alert, guardian, secret, text (answer with Answer), info, error, pending (no
    # answer; pending says the request now waits for a parent or guardian).
    type Prompt (id: int, kind: string, message: string)

    # A child's request waiting for a parent or guardian to decide it. purpose is
    # approve (the app asks to be approved) or revoke (it asks to lift its approval).
    type Request (
      id: int,
      user: string,
      app: string,
      name: string,
      path: string,
      purpose: string,
      created: float,
      expires: float
    )

    # The calling app's status: notDetermined, denied or approved.
    method GetStatus() -> (app: string, user: string, status: string)

    # The calling app's status now, then after every change (call with more).
    method Subscribe() -> (status: string)

    # Requests authorization for the calling app; member is child or individual.
    # Call with more: replies with prompt set come first (answer each that expects
    # an answer with a oneway Answer call on the same connection); the last reply
    # carries the resulting status. A child's request shows the alert, then waits
    # (a pending prompt) until a parent or guardian decides it with DecideRequest.
    method RequestAuthorization(member: string) -> (prompt: ?Prompt, status: ?string)

    # Answers prompt id. For an alert, response is "continue" or "dont-allow";
    # for the guardian, a user name; otherwise what PAM asked for. A null response
    # cancels the request. Send with oneway.
    method Answer(id: int, response: ?string) -> ()

    # Revokes the calling app's authorization: approved becomes notDetermined and
    # its lock is released; denied is left as it is. Call with more: a child's
    # approval is released only after a parent or guardian decides, as for
    # RequestAuthorization; the last reply has no prompt.
    method RevokeAuthorization() -> (prompt: ?Prompt)

    # Lists authorizations, all or one user's.
    method ListAuthorizations(user: ?string) -> (authorizations: []Authorization)

    # Sets an app's status for a user to approved or denied.
    method SetStatus(user: string, app: string, status: string) -> (authorization: Authorization)

    # Revokes an app's authorization for a user.
    method Revoke(user: string, app: string) -> ()

    # A child becomes an adult: revokes every child approval of the user. Root only.
    method Graduate(user: string) -> (revoked: []string)

    # The requests waiting that the caller may decide: their children's for a
    # guardian, all for root.
    method ListRequests() -> (requests: []Request)

    # The same list now, then again after every change (call with more).
    method WatchRequests() -> (requests: []Request)

    # Decides request id: approve (approve and lock, or lift the approval) or not.
    # Call with more: a caller other than root authenticates through PAM on the
    # guardian service first, with prompts as in RequestAuthorization. The last
    # reply carries the authorization as it now is, if there is one.
    method DecideRequest(id: int, approve: bool) -> (prompt: ?Prompt, authorization: ?Authorization)

    # Checks that every approved child app is locked and nothing else is; with
    # repair, fixes what drifted. Root only.
    method VerifyLocks(repair: bool) -> (findings: []string)

    error Restricted (message: string)
    error Unavailable (message: string)
    error InvalidAccountType (message: string)
    error InvalidArgument (message: string)
    error AuthorizationConflict (message: string)
    # status is "denied" when a guardian chose Don't Allow.
    error AuthorizationCanceled (message: string, status: ?string)
    error NetworkError (message: string)
    error AuthenticationMethodUnavailable (message: string)
    error PermissionDenied (message: string)
    error NotFound (message: string)
    # A bound on one connection was reached, such as how many subscriptions it
    # holds; the call did nothing.
    error LimitReached (message: string)

    """
}

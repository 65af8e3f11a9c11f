/// Something the system shows during a request (the Guard sends it, the
/// app's prompter shows it): the alert, the guardian's
/// name, what PAM asks, and its messages.
public struct AuthorizationPrompt: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// "Allow “App” to provide parental controls for USER?" Answer with
        /// `continue` (or `y`, `yes`) to go on, `don't allow` (or `n`, `no`) to refuse.
        case alert
        /// The parent or guardian's user name. After "a parent or guardian
        /// is here", an empty answer (here, or at the code prompt that
        /// follows) goes back to the alert, which is asked again; the
        /// prompt's message says so.
        case guardian
        /// A secret such as a password: do not echo it.
        case secret
        /// A question whose answer may be echoed.
        case text
        /// The request now waits for a parent or guardian to decide it from
        /// their own account; the message says how. No answer: the request
        /// ends when they decide, when it expires, or when the app gives up.
        case pending
        /// Information to show; no answer.
        case info
        /// An error to show; no answer.
        case error
    }

    public var kind: Kind
    public var message: String
    /// For an alert: whether a parent or guardian may approve here, at the
    /// child's screen, with their one-time code (answer
    /// ``AlertResponse/guardianHere``). The Guard offers it only when a
    /// guardian of the child has enrolled a code; otherwise that answer is
    /// taken as no answer.
    public var offersGuardianHere: Bool

    public init(kind: Kind, message: String, offersGuardianHere: Bool = false) {
        self.kind = kind
        self.message = message
        self.offersGuardianHere = offersGuardianHere
    }

    /// Whether the prompt waits for an answer.
    public var expectsAnswer: Bool { ![.info, .error, .pending].contains(kind) }
}


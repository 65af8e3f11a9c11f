import SystemKit

/// What the Guard shows the person at the app during a request: the alert,
/// the guardian's name, and the PAM conversation it relays.
package struct GuardPrompt: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable, CaseIterable {
        /// "Allow “NAME” to provide parental controls for USER?": continue or don't allow.
        case alert
        /// The guardian's user name.
        case guardian
        /// A PAM prompt whose answer is not echoed.
        case secret
        /// A PAM prompt whose answer may be echoed.
        case text
        /// Information; no answer.
        case info
        /// An error message; no answer.
        case error
    }

    package var kind: Kind
    package var message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Whether the prompt waits for an answer.
    package var expectsAnswer: Bool { ![.info, .error].contains(kind) }
}

/// The answer to an alert.
package enum AlertAnswer: String, Sendable {
    case `continue` = "continue"
    case dontAllow = "dont-allow"
}

/// The client end of one request: sends prompts, waits for answers.
///
/// Used only from the request's own thread; `ask` blocks until the answer,
/// the deadline, or the client hanging up.
package protocol RequestChannel: Sendable {
    /// Sends `prompt` and waits for its answer.
    /// - Throws: ``PAMConversationEnd/canceled`` when the client cancels or hangs up,
    ///   ``PAMConversationEnd/timedOut`` at the deadline.
    func ask(_ prompt: GuardPrompt, deadline: ContinuousClock.Instant) throws(PAMConversationEnd) -> SecretBytes
    /// Sends an info or error message.
    func tell(_ prompt: GuardPrompt)
    /// Whether the client has gone.
    var isClosed: Bool { get }
}

/// Relays a PAM conversation to a request's client.
struct ChannelConversation: PAMConversation {
    let channel: any RequestChannel

    func respond(to message: PAMMessage, deadline: ContinuousClock.Instant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text): channel.tell(GuardPrompt(.info, text)); return nil
        case .error(let text): channel.tell(GuardPrompt(.error, text)); return nil
        case .secretPrompt(let text): return try channel.ask(GuardPrompt(.secret, text), deadline: deadline)
        case .textPrompt(let text): return try channel.ask(GuardPrompt(.text, text), deadline: deadline)
        }
    }
}

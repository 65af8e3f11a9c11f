import SystemKit

/// One message of a PAM conversation, as a module sent it.
package enum PAMMessage: Hashable, Sendable {
    /// A prompt whose answer must not be echoed (a password).
    case secretPrompt(String)
    /// A prompt whose answer may be echoed (a user name, a code shown elsewhere).
    case textPrompt(String)
    /// Information to show, with no answer.
    case info(String)
    /// An error to show, with no answer.
    case error(String)

    /// The text to show.
    package var text: String {
        switch self {
        case .secretPrompt(let text), .textPrompt(let text), .info(let text), .error(let text): text
        }
    }

    /// Whether the message wants an answer.
    package var isPrompt: Bool {
        switch self {
        case .secretPrompt, .textPrompt: true
        case .info, .error: false
        }
    }
}

/// Why a conversation ended before PAM finished.
package enum PAMConversationEnd: Error, Hashable, Sendable {
    /// The person canceled, or the other side hung up.
    case canceled
    /// No answer came before the deadline.
    case timedOut
}

/// The other side of a PAM conversation: a terminal, or a client of the Guard.
///
/// Called on the thread running the PAM transaction, which may block until the
/// person answers; it must give up by `deadline` (throw ``PAMConversationEnd/timedOut``).
package protocol PAMConversation: Sendable {
    /// Answers `message`: the answer for a prompt, nil for info and error messages.
    /// - Throws: ``PAMConversationEnd`` to end the transaction.
    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes?
}

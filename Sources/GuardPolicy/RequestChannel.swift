import FamilyControlsModel
import SystemKit
import PAM

/// The client end of one request: sends prompts, waits for answers.
///
/// Used only from the request's own thread; `ask` blocks until the answer,
/// the deadline, or the client hanging up.
package protocol RequestChannel: Sendable {
    /// Sends `prompt` and waits for its answer.
    /// - Throws: ``PAMConversationEnd/canceled`` when the client cancels or hangs up,
    ///   ``PAMConversationEnd/timedOut`` at the deadline.
    func ask(_ prompt: AuthorizationPrompt, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes
    /// Sends an info or error message.
    func tell(_ prompt: AuthorizationPrompt)
    /// Whether the client has gone.
    var isClosed: Bool { get }
    /// Set when the client goes: wakes what waits on its behalf.
    var hangUp: HangUp { get }
}

/// Relays a PAM conversation to a request's client.
struct ChannelConversation: PAMConversation {
    let channel: any RequestChannel

    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text): channel.tell(AuthorizationPrompt(kind: .info, message: text)); return nil
        case .error(let text): channel.tell(AuthorizationPrompt(kind: .error, message: text)); return nil
        case .secretPrompt(let text):
            return try channel.ask(AuthorizationPrompt(kind: .secret, message: Self.inWords(text)), deadline: deadline)
        case .textPrompt(let text): return try channel.ask(AuthorizationPrompt(kind: .text, message: text), deadline: deadline)
        }
    }

    /// pam_oath's prompt, ``One-time password (OATH) for `NAME': ``, as a
    /// parent reads it; any other prompt as PAM wrote it.
    static func inWords(_ prompt: String) -> String {
        let start = "One-time password (OATH) for `", end = "': "
        guard prompt.hasPrefix(start), prompt.hasSuffix(end), prompt.count > start.count + end.count else { return prompt }
        let name = prompt.dropFirst(start.count).dropLast(end.count)
        return "\(name)'s one-time code (the 6 digits their authenticator app shows now): "
    }
}

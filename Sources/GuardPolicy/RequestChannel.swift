import FamilyControlsModel
import SystemKit
import PAM
import Synchronization

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
///
/// With ``GoingBack``, the person may answer PAM's first prompt with
/// nothing to go back to the alert's choices: the conversation then ends
/// before PAM has had any answer, so going back is never a guess. Later
/// prompts of the same transaction (after PAM has had an answer) do not
/// offer it: what PAM asks next could tell whether that answer was right.
struct ChannelConversation: PAMConversation {
    let channel: any RequestChannel
    /// Set when going back is offered; says whether the person did.
    var goingBack: GoingBack? = nil

    /// Whether the person went back, and whether PAM has had an answer yet.
    final class GoingBack: Sendable {
        private let state = Mutex((answered: false, wentBack: false))

        init() {}

        /// Whether the person went back at the first prompt.
        var wentBack: Bool { state.withLock { $0.wentBack } }

        /// Whether the prompt about to be shown may offer going back.
        fileprivate var offered: Bool { state.withLock { !$0.answered } }

        /// Records `answer` to the prompt that offered going back (when `offered`), or a later one.
        /// - Returns: whether the answer is going back.
        fileprivate func record(_ answer: SecretBytes, offered: Bool) -> Bool {
            state.withLock { state in
                if offered && answer.count == 0 {
                    state.wentBack = true
                    return true
                }
                state.answered = true
                return false
            }
        }
    }

    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        switch message {
        case .info(let text): channel.tell(AuthorizationPrompt(kind: .info, message: text)); return nil
        case .error(let text): channel.tell(AuthorizationPrompt(kind: .error, message: text)); return nil
        case .secretPrompt(let text): return try ask(.secret, Self.inWords(text), deadline: deadline)
        case .textPrompt(let text): return try ask(.text, text, deadline: deadline)
        }
    }

    private func ask(_ kind: AuthorizationPrompt.Kind, _ text: String,
                     deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes {
        let offered = goingBack?.offered ?? false
        let answer = try channel.ask(AuthorizationPrompt(kind: kind, message: offered ? Self.offeringBack(text) : text),
                                     deadline: deadline)
        // Nothing typed, where going back was offered: PAM gets no answer at all.
        if let goingBack, goingBack.record(answer, offered: offered) { throw .canceled }
        return answer
    }

    /// pam_oath's prompt, ``One-time password (OATH) for `NAME': ``, as a
    /// parent reads it; any other prompt as PAM wrote it.
    static func inWords(_ prompt: String) -> String {
        let start = "One-time password (OATH) for `", end = "': "
        guard prompt.hasPrefix(start), prompt.hasSuffix(end), prompt.count > start.count + end.count else { return prompt }
        let name = prompt.dropFirst(start.count).dropLast(end.count)
        return "\(name)'s one-time code (the 6 digits their authenticator app shows now): "
    }

    /// `prompt` saying how to go back: "Password, or press Enter to go back: ".
    static func offeringBack(_ prompt: String) -> String {
        var asked = Substring(prompt)
        while let last = asked.last, last == " " || last == ":" { asked = asked.dropLast() }
        return asked + ", or press Enter to go back: "
    }
}

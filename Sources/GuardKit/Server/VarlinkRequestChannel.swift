import Synchronization
import FamilyControlsModel
import GuardProtocol
import SystemKit
import Varlink
import VarlinkServerKit
import PAM
import GuardPolicy

/// A request's prompts, sent as `continues` replies of `RequestAuthorization`,
/// and the answers, received as `Answer` calls on the same connection.
final class VarlinkRequestChannel: RequestChannel {
    private struct State {
        var nextID: Int64 = 0
        /// The prompt waiting for an answer, and the answer once it came
        /// (nil inside: the client canceled).
        var waiting: Int64?
        var answer: SecretBytes??
        var closed = false
    }

    private let connection: VarlinkConnection
    /// The method's reply that carries only a prompt.
    private let promptReply: @Sendable (Guard.Prompt) -> JSONObject
    private let state = Mutex(State())
    private let signal = ConditionSignal()

    /// Set by ``close()``, which the connection's session calls when the connection closes.
    let hangUp = HangUp()

    /// The channel of a call of `Method` on `connection`.
    init<Method: GuardMethod>(_ method: Method.Type, connection: VarlinkConnection) where Method.Reply: GuardPromptingReply {
        self.connection = connection
        promptReply = { Method.Reply.prompting($0).object }
    }

    var isClosed: Bool { state.withLock { $0.closed } || connection.isClosed }

    func ask(_ prompt: AuthorizationPrompt, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes {
        let id = state.withLock { state in
            state.nextID += 1
            state.waiting = state.nextID
            state.answer = nil
            return state.nextID
        }
        send(prompt, id: id)
        var timedOut = false
        signal.wait(until: deadline) {
            state.withLock { $0.answer != nil || $0.closed }
        } onTimeout: {
            timedOut = true
        }
        let answer = state.withLock { state -> SecretBytes?? in
            state.waiting = nil
            defer { state.answer = nil }
            return state.closed ? .some(nil) : state.answer
        }
        if timedOut, answer == nil { throw .timedOut }
        guard let answer, let secret = answer else { throw .canceled }
        return secret
    }

    func tell(_ prompt: AuthorizationPrompt) {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        send(prompt, id: id)
    }

    /// Delivers the client's `Answer` for prompt `id`; answers to anything but
    /// the waiting prompt are ignored.
    func deliver(id: Int64, response: SecretBytes?) {
        let delivered = state.withLock { state in
            guard state.waiting == id, state.answer == nil else { return false }
            state.answer = .some(response)
            return true
        }
        if delivered { signal.broadcast() }
    }

    /// The client hung up or the request ended: wake the waiting prompt.
    func close() {
        state.withLock { $0.closed = true }
        signal.broadcast()
        hangUp.set()
    }

    private func send(_ prompt: AuthorizationPrompt, id: Int64) {
        connection.reply(promptReply(Guard.Prompt(id: id, kind: Guard.PromptKind(prompt.kind), message: prompt.message,
                                                  guardianHere: prompt.offersGuardianHere ? true : nil)),
                         continues: true)
    }
}

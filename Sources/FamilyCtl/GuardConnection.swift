#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel
import SystemKit
import Varlink
import VarlinkClientKit
import PAM

/// `familyctl`'s connection to the Guard: one call at a time, errors turned
/// into messages and exit statuses.
struct GuardConnection {
    static let interface = GuardEndpoint.interface
    let client: VarlinkClient

    /// The socket: `--socket`, else `FAMILYCONTROLS_SOCKET`, else the default.
    static func socketPath(_ option: String?) -> String {
        GuardEndpoint.socketPath(option: option)
    }

    /// Connects to the Guard at `socket`.
    ///
    /// The Guard runs as root: a service at the socket run by anyone else (a
    /// child's fake behind `FAMILYCONTROLS_SOCKET`, say) is refused before a
    /// single byte is sent to it, as the app library refuses it.
    init(socket: String) throws(CommandFailure) {
        let client: VarlinkClient
        do throws(VarlinkClientError) {
            client = try VarlinkClient(path: socket, connectTimeout: .seconds(2), replyTimeout: .seconds(120))
        } catch {
            throw CommandFailure(.unavailable, "cannot reach the Guard: \(error) (is familycontrolsd running?)")
        }
        guard let peer = client.peerCredentials, peer.uid == 0 else {
            let who = client.peerCredentials.map { "uid \($0.uid)" } ?? "an unknown user"
            client.close()
            throw CommandFailure(.unavailable, "the service at \(DisplayText.sanitized(socket)) runs as \(who), not as root: "
                + "it is not the Guard, so nothing was sent to it")
        }
        self.client = client
    }

    func call(_ method: String, _ parameters: JSONObject = [:]) throws(CommandFailure) -> JSONObject {
        do throws(VarlinkClientError) {
            return try client.call("\(Self.interface).\(method)", parameters: parameters)
        } catch {
            throw Self.failure(error)
        }
    }

    /// Calls `method` with `more` and hands every reply to `each` until the
    /// last (a watch ends only when the Guard stops or the command is interrupted).
    func stream(_ method: String, _ parameters: JSONObject = [:], _ each: (JSONObject) -> Void) throws(CommandFailure) {
        client.replyTimeout = nil
        do throws(VarlinkClientError) {
            try client.startStreaming("\(Self.interface).\(method)", parameters: parameters)
            while true {
                let reply = try client.receiveReply()
                if let failure = reply.failure { throw VarlinkClientError.remote(failure) }
                each(reply.parameters)
                if !reply.continues { return }
            }
        } catch {
            throw Self.failure(error)
        }
    }

    /// Calls `method` with `more`, answering each prompt through
    /// `conversation` (the person at this terminal), and returns the last
    /// reply's parameters.
    func converse(_ method: String, _ parameters: JSONObject, through conversation: any PAMConversation,
                  promptTimeout: Duration = .seconds(120)) throws(CommandFailure) -> JSONObject {
        do throws(VarlinkClientError) {
            try client.startStreaming("\(Self.interface).\(method)", parameters: parameters)
            while true {
                let reply = try client.receiveReply()
                if let failure = reply.failure { throw VarlinkClientError.remote(failure) }
                if let prompt = reply.parameters["prompt"]?.objectValue {
                    try answer(prompt, through: conversation, deadline: .now.advanced(by: promptTimeout))
                }
                if !reply.continues { return reply.parameters }
            }
        } catch {
            throw Self.failure(error)
        }
    }

    private func answer(_ prompt: JSONObject, through conversation: any PAMConversation,
                        deadline: MonotonicInstant) throws(VarlinkClientError) {
        guard let id = prompt["id"]?.intValue, let kind = prompt["kind"]?.stringValue else { return }
        let text = DisplayText.sanitized(prompt["message"]?.stringValue ?? "")
        let message: PAMMessage
        switch kind {
        case "secret": message = .secretPrompt(text)
        case "text", "guardian": message = .textPrompt(text)
        case "error": message = .error(text)
        default: message = .info(text)
        }
        let expectsAnswer = ["secret", "text", "guardian"].contains(kind)
        let reply: SecretBytes?
        do throws(PAMConversationEnd) {
            reply = try conversation.respond(to: message, deadline: deadline)
        } catch {
            reply = nil
        }
        guard expectsAnswer else { return }
        // No answer (end of input, Ctrl-D, a timeout) cancels, as in sudo.
        let response: JSONValue = reply.map { .secret($0) } ?? .null
        try client.sendOneway("\(Self.interface).Answer", parameters: ["id": .int(id), "response": response])
    }

    /// What a Varlink failure means for the command: its message and exit status.
    private static func failure(_ error: VarlinkClientError) -> CommandFailure {
        if case .remote(let remote) = error {
            let message = remote.parameters["message"]?.stringValue ?? remote.name
            let code: ExitCode = remote.name.hasSuffix(".PermissionDenied") ? .permission : .failure
            return CommandFailure(code, message)
        }
        return CommandFailure(.unavailable, "the Guard did not answer: \(error)")
    }
}

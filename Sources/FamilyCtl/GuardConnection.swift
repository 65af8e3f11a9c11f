#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel
import GuardProtocol
import SystemKit
import Varlink
import VarlinkClientKit
import PAM

/// `familyctl`'s connection to the Guard: one call at a time, errors turned
/// into messages and exit statuses.
struct GuardConnection {
    let client: VarlinkClient
    /// The ssh process carrying the connection, for `-H`; nil on this machine's socket.
    let tunnel: SSHTunnel?

    /// The machines `-H` named, for the whole command: set once by `main`
    /// before any verb runs or any thread starts, read-only after.
    nonisolated(unsafe) static var remoteHosts: [RemoteHost] = []

    /// The socket: `--socket`, else `FAMILYCONTROLS_SOCKET`, else the default.
    static func socketPath(_ option: String?) -> String {
        GuardEndpoint.socketPath(option: option)
    }

    /// Connects to the Guard at `socket`.
    ///
    /// The Guard runs as root: a service at the socket run by anyone else (a
    /// child's fake behind `FAMILYCONTROLS_SOCKET`, say) is refused before a
    /// single byte is sent to it, as the app library refuses it.
    /// With `-H HOST`, the Guard on HOST instead, through ssh: the socket
    /// there is checked the same way, by the bridge, before a byte is relayed.
    init(socket: String) throws(CommandFailure) {
        if let host = Self.remoteHosts.first {
            self = try GuardConnection(host: host)
            return
        }
        let client: VarlinkClient
        do throws(VarlinkClientError) {
            client = try VarlinkClient(path: socket, connectTimeout: .seconds(2), replyTimeout: .seconds(120))
        } catch {
            throw CommandFailure(.unavailable, "cannot reach the Guard: \(error) (is familycontrolsd running?)")
        }
        do throws(CommandFailure) {
            try Self.requireGuard(client.peerCredentials, at: socket)
        } catch {
            client.close()
            throw error
        }
        self.client = client
        tunnel = nil
    }

    /// Connects to the Guard on `host` through ssh (`-H`).
    init(host: RemoteHost) throws(CommandFailure) {
        let tunnel = try SSHTunnel.open(host)
        self.tunnel = tunnel
        client = tunnel.client
    }

    /// Refuses a service at `socket` that does not run as root.
    static func requireGuard(_ peer: PeerCredentials?, at socket: String) throws(CommandFailure) {
        guard let peer, peer.uid == 0 else {
            let who = peer.map { "uid \($0.uid)" } ?? "an unknown user"
            throw CommandFailure(.unavailable, "the service at \(DisplayText.sanitized(socket)) runs as \(who), not as root: "
                + "it is not the Guard, so nothing was sent to it")
        }
    }

    /// Calls `Method` and returns its reply as the interface types it.
    func call<Method: GuardMethod>(_ method: Method.Type, _ parameters: Method.Parameters) throws(CommandFailure) -> Method.Reply {
        do throws(VarlinkClientError) {
            return try Self.reply(Method.self, try client.call(Method.method, parameters: parameters.object))
        } catch {
            throw failure(error)
        }
    }

    /// Calls `Method` with `more` and hands every reply to `each` until the
    /// last (a watch ends only when the Guard stops or the command is interrupted).
    func stream<Method: GuardMethod>(_ method: Method.Type, _ parameters: Method.Parameters,
                                     _ each: (Method.Reply) -> Void) throws(CommandFailure) {
        client.replyTimeout = nil
        do throws(VarlinkClientError) {
            try client.startStreaming(Method.method, parameters: parameters.object)
            while true {
                let reply = try client.receiveReply()
                if let failure = reply.failure { throw VarlinkClientError.remote(failure) }
                each(try Self.reply(Method.self, reply.parameters))
                if !reply.continues { return }
            }
        } catch {
            throw failure(error)
        }
    }

    /// Calls `Method` with `more`, answering each prompt through
    /// `conversation` (the person at this terminal), and returns the last reply.
    func converse<Method: GuardMethod>(_ method: Method.Type, _ parameters: Method.Parameters,
                                       through conversation: any PAMConversation,
                                       promptTimeout: Duration = .seconds(120)) throws(CommandFailure) -> Method.Reply
    where Method.Reply: GuardPromptingReply {
        do throws(VarlinkClientError) {
            try client.startStreaming(Method.method, parameters: parameters.object)
            while true {
                let received = try client.receiveReply()
                if let failure = received.failure { throw VarlinkClientError.remote(failure) }
                let reply = try Self.reply(Method.self, received.parameters)
                if let prompt = reply.prompt {
                    try answer(prompt, through: conversation, deadline: .now.advanced(by: promptTimeout))
                }
                if !received.continues { return reply }
            }
        } catch {
            throw failure(error)
        }
    }

    private func answer(_ prompt: Guard.Prompt, through conversation: any PAMConversation,
                        deadline: MonotonicInstant) throws(VarlinkClientError) {
        let text = DisplayText.sanitized(prompt.message)
        let message: PAMMessage
        let expectsAnswer: Bool
        switch prompt.kind {
        case .secret: (message, expectsAnswer) = (.secretPrompt(text), true)
        case .text, .guardian: (message, expectsAnswer) = (.textPrompt(text), true)
        case .error: (message, expectsAnswer) = (.error(text), false)
        case .alert, .info, .pending: (message, expectsAnswer) = (.info(text), false)
        }
        let reply: SecretBytes?
        do throws(PAMConversationEnd) {
            reply = try conversation.respond(to: message, deadline: deadline)
        } catch {
            reply = nil
        }
        guard expectsAnswer else { return }
        // No answer (end of input, Ctrl-D, a timeout) cancels, as in sudo.
        try client.sendOneway(Guard.Answer.method, parameters: Guard.Answer.Parameters(id: prompt.id, response: reply).object)
    }

    /// `parameters` as `Method`'s reply; a reply the interface does not
    /// describe is the Guard's fault, reported as a protocol error.
    private static func reply<Method: GuardMethod>(_ method: Method.Type,
                                                   _ parameters: JSONObject) throws(VarlinkClientError) -> Method.Reply {
        do throws(ProtocolDecodingError) {
            return try Method.Reply(parameters, at: "", strict: false)
        } catch {
            throw VarlinkClientError.protocolViolation("the reply to \(Method.name) is not what the interface says: \(error)")
        }
    }

    /// What a Varlink failure means for the command: its message and exit status.
    private func failure(_ error: VarlinkClientError) -> CommandFailure {
        if case .remote(let remote) = error {
            let failure = GuardFailure(remote: remote)
            let refused = failure?.kind == .permissionDenied || remote.name == VarlinkError.Name.permissionDenied
            var command = CommandFailure(refused ? .permission : .failure, failure?.message ?? remote.name)
            command.remoteError = remote.name
            return command
        }
        if let tunnel { return tunnel.failure(after: error) }
        return CommandFailure(.unavailable, "the Guard did not answer: \(error)")
    }
}

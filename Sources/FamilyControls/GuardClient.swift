import Foundation
import GuardProtocol
import SystemKit
import Varlink
import VarlinkClientKit

/// A failure from the Guard or from reaching it: the public error case, and
/// the Guard's message saying what to do about it.
struct GuardClientFailure: Error, Sendable {
    var error: FamilyControlsError
    var message: String
    /// The status the Guard left behind (`denied` after "Don't Allow"), if it says.
    var resultingStatus: AuthorizationStatus?

    init(_ error: FamilyControlsError, _ message: String) {
        self.error = error
        self.message = message
    }

    /// Maps what the Varlink client reported to the public error.
    init(_ failure: VarlinkClientError, connecting: Bool) {
        switch failure {
        case .remote(let remote):
            let known = (try? GuardError(name: remote.name, parameters: remote.parameters)) ?? nil
            self.init(FamilyControlsError(varlinkName: remote.name) ?? (connecting ? .unavailable : .networkError),
                      known?.message ?? remote.name)
            if case .authorizationCanceled(_, let status?)? = known { resultingStatus = AuthorizationStatus(status) }
        case .noSuchSocket, .connectionRefused, .permissionDenied, .connectTimedOut, .invalidSocketPath, .connectFailed:
            self.init(.unavailable, failure.description)
        default:
            self.init(connecting ? .unavailable : .networkError, failure.description)
        }
    }
}

/// The library's side of the Guard's Varlink interface. Blocking: used only
/// on the library's own threads.
enum GuardClient {
    /// `FAMILYCONTROLS_SOCKET` when set (tests, sandboxes), else the default.
    static var socketPath: String { GuardEndpoint.socketPath() }

    /// Connects quickly or not at all: with no Guard (a sandbox, a container)
    /// requests must fail with `.unavailable` at once, never hang.
    ///
    /// The Guard runs as root: a service at the socket run by anyone else
    /// (a child's fake behind `FAMILYCONTROLS_SOCKET`, say) is refused before
    /// a single byte is sent to it or a single prompt relayed from it.
    static func connect() throws(GuardClientFailure) -> VarlinkClient {
        let path = socketPath
        let client: VarlinkClient
        do throws(VarlinkClientError) {
            client = try VarlinkClient(path: path, connectTimeout: .seconds(1))
        } catch {
            throw GuardClientFailure(error, connecting: true)
        }
        guard let peer = client.peerCredentials, peer.uid == 0 else {
            let who = client.peerCredentials.map { "uid \($0.uid)" } ?? "an unknown user"
            client.close()
            throw GuardClientFailure(.unavailable, "the service at \(path) runs as \(who), not as root: "
                + "it is not the Guard, so nothing was sent to it")
        }
        return client
    }

    /// Runs `RequestAuthorization`, relaying each prompt to `prompter`.
    /// `connected` receives the connection's interrupter: interrupting it
    /// cancels the request (the Guard sees the app hang up).
    static func request(_ member: FamilyControlsMember, prompter: any Prompter,
                        connected: (VarlinkClientInterrupter) -> Void = { _ in }) throws(GuardClientFailure) -> AuthorizationStatus {
        let final = try converse(Guard.RequestAuthorization.self, .init(member: Guard.Member(member)), prompter: prompter,
                                 connected: connected)
        guard let status = final.status else {
            throw GuardClientFailure(.networkError, "the Guard's final reply carried no status")
        }
        return AuthorizationStatus(status)
    }

    /// Runs `RevokeAuthorization`; a child's approval asks for a guardian through `prompter`.
    static func revoke(prompter: any Prompter, connected: (VarlinkClientInterrupter) -> Void = { _ in }) throws(GuardClientFailure) {
        _ = try converse(Guard.RevokeAuthorization.self, .init(), prompter: prompter, connected: connected)
    }

    /// Calls `Method` with `more`, relays every prompt to `prompter`, and
    /// returns the last reply.
    private static func converse<Method: GuardMethod>(
        _ method: Method.Type, _ parameters: Method.Parameters, prompter: any Prompter,
        connected: (VarlinkClientInterrupter) -> Void
    ) throws(GuardClientFailure) -> Method.Reply where Method.Reply: GuardPromptingReply {
        let client = try connect()
        defer { client.close() }
        connected(client.interrupter)
        do throws(VarlinkClientError) {
            try client.startStreaming(Method.method, parameters: parameters.object)
            while true {
                let received = try client.receiveReply()
                if let failure = received.failure { throw VarlinkClientError.remote(failure) }
                let reply: Method.Reply
                do throws(ProtocolDecodingError) {
                    reply = try Method.Reply(received.parameters, at: "", strict: false)
                } catch {
                    throw VarlinkClientError.protocolViolation("the reply to \(Method.name) is not what the interface says: \(error)")
                }
                if let prompt = reply.prompt {
                    try relay(prompt, to: prompter, over: client)
                }
                if !received.continues { return reply }
            }
        } catch {
            if client.interrupter.wasInterrupted {
                throw GuardClientFailure(.authorizationCanceled, "the request was canceled by the app")
            }
            throw GuardClientFailure(error, connecting: false)
        }
    }

    private static func relay(_ prompt: Guard.Prompt, to prompter: any Prompter, over client: VarlinkClient) throws(VarlinkClientError) {
        let kind = AuthorizationPrompt.Kind(prompt.kind)
        let shown = AuthorizationPrompt(kind: kind, message: prompt.message)
        // A password goes out as bytes: straight from the library's own
        // prompters, and from an app's prompter as soon as it is handed over.
        if kind == .secret {
            let secret = (prompter as? any SecretPrompting).map { $0.respondWithSecret(to: shown) }
                ?? prompter.respond(to: shown).map { SecretBytes($0) }
            try client.sendOneway(Guard.Answer.method, parameters: Guard.Answer.Parameters(id: prompt.id, response: secret).object)
            return
        }
        let answer = prompter.respond(to: shown)
        guard shown.expectsAnswer else { return }
        var response = answer
        if kind == .alert {
            switch answer.flatMap(AlertResponse.init) {
            case .allow?: response = "continue"
            case .refuse?: response = "dont-allow"
            case nil: response = nil
            }
        }
        let parameters = Guard.Answer.Parameters(id: prompt.id, response: response.map { SecretBytes($0) })
        try client.sendOneway(Guard.Answer.method, parameters: parameters.object)
    }
}

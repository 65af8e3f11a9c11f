import Foundation
import GuardProtocol
import SystemKit
import Varlink
import VarlinkClientKit

extension GuardFailure {
    /// What the Varlink client reported, as the failure the app sees: the
    /// Guard's own error as it sent it; anything else from the Guard, or a
    /// Guard that cannot be reached, as `unavailable` when connecting and
    /// `networkError` once connected.
    init(_ failure: VarlinkClientError, connecting: Bool) {
        switch failure {
        case .remote(let remote):
            self = GuardFailure(remote: remote) ?? GuardFailure(connecting ? .unavailable : .networkError, remote.name)
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
    /// a single byte is sent to it or a single prompt relayed from it; from
    /// inside a sandbox, where root shows as the overflow uid, the peer is
    /// ``GuardPeer/unproven`` and is never sent a secret.
    static func connect() throws(GuardFailure) -> VarlinkClient {
        try connectToPeer().client
    }

    private static func connectToPeer() throws(GuardFailure) -> (client: VarlinkClient, peer: GuardPeer) {
        let path = socketPath
        let client: VarlinkClient
        do throws(VarlinkClientError) {
            client = try VarlinkClient(path: path, connectTimeout: .seconds(1))
        } catch {
            var failure = GuardFailure(error, connecting: true)
            if case .noSuchSocket = error, GuardPeer.inFlatpak {
                failure.message += " (a Flatpak app reaches the Guard when its manifest's finish-args grant "
                    + "--filesystem=/run/familycontrols:ro)"
            }
            throw failure
        }
        do throws(GuardFailure) {
            return (client, try GuardPeer.of(client, path: path))
        } catch {
            client.close()
            throw error
        }
    }

    /// Runs `RequestAuthorization`, relaying each prompt to `prompter`.
    /// `connected` receives the connection's interrupter: interrupting it
    /// cancels the request (the Guard sees the app hang up).
    static func request(_ member: FamilyControlsMember, prompter: any Prompter,
                        connected: (VarlinkClientInterrupter) -> Void = { _ in }) throws(GuardFailure) -> AuthorizationStatus {
        let final = try converse(Guard.RequestAuthorization.self, .init(member: Guard.Member(member)), prompter: prompter,
                                 connected: connected)
        guard let status = final.status else {
            throw GuardFailure(.networkError, "the Guard's final reply carried no status")
        }
        return AuthorizationStatus(status)
    }

    /// Runs `RevokeAuthorization`; a child's approval asks for a guardian through `prompter`.
    static func revoke(prompter: any Prompter, connected: (VarlinkClientInterrupter) -> Void = { _ in }) throws(GuardFailure) {
        _ = try converse(Guard.RevokeAuthorization.self, .init(), prompter: prompter, connected: connected)
    }

    /// Runs `UpdateApp`; an unsigned update waits for a guardian, said through `prompter`.
    static func update(prompter: any Prompter, connected: (VarlinkClientInterrupter) -> Void = { _ in }) throws(GuardFailure) -> AppUpdateOutcome {
        let final = try converse(Guard.UpdateApp.self, .init(), prompter: prompter, connected: connected)
        switch final.outcome {
        case .signed?: return .signed
        case .approved?: return .approvedByGuardian
        case nil: throw GuardFailure(.networkError, "the Guard's final reply carried no outcome")
        }
    }

    /// Runs `IdentifyMonitor`: the monitor the Guard says this process is,
    /// from the kernel's word on it, or none. One short call, bounded as a
    /// status read is.
    static func identifyMonitor() throws(GuardFailure) -> IdentifiedMonitor? {
        try call(Guard.IdentifyMonitor.self, Guard.IdentifyMonitor.Parameters()).monitor.map {
            IdentifiedMonitor(appID: $0.appID, user: $0.user, session: $0.session)
        }
    }

    /// One short call of `Method` on a connection of its own, bounded as a
    /// status read is; its reply, checked against the interface.
    static func call<Method: GuardMethod>(_ method: Method.Type, _ parameters: Method.Parameters) throws(GuardFailure) -> Method.Reply {
        let client = try connect()
        defer { client.close() }
        do throws(VarlinkClientError) {
            let reply = try client.call(Method.method, parameters: parameters.object, timeout: .seconds(5))
            do throws(ProtocolDecodingError) {
                return try Method.Reply(reply, at: "", strict: false)
            } catch {
                throw VarlinkClientError.protocolViolation("the reply to \(Method.name) is not what the interface says: \(error)")
            }
        } catch {
            throw GuardFailure(error, connecting: false)
        }
    }

    /// Calls `Method` with `more`, relays every prompt to `prompter`, and
    /// returns the last reply.
    static func converse<Method: GuardMethod>(
        _ method: Method.Type, _ parameters: Method.Parameters, prompter: any Prompter,
        connected: (VarlinkClientInterrupter) -> Void
    ) throws(GuardFailure) -> Method.Reply where Method.Reply: GuardPromptingReply {
        let (client, peer) = try connectToPeer()
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
                    // Refused before the person is even asked: hanging up cancels it at the Guard.
                    if peer == .unproven, prompt.kind == .secret { break }
                    try relay(prompt, to: prompter, over: client)
                }
                if !received.continues { return reply }
            }
        } catch {
            if client.interrupter.wasInterrupted {
                throw GuardFailure(.authorizationCanceled, "the request was canceled by the app")
            }
            throw GuardFailure(error, connecting: false)
        }
        // Left the loop only for a secret an unproven peer asked for.
        throw GuardPeer.secretRefused
    }

    private static func relay(_ prompt: Guard.Prompt, to prompter: any Prompter, over client: VarlinkClient) throws(VarlinkClientError) {
        let kind = AuthorizationPrompt.Kind(prompt.kind)
        let shown = AuthorizationPrompt(kind: kind, message: prompt.message,
                                        offersGuardianHere: kind == .alert && prompt.guardianHere == true)
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
        // The alert's answer goes out in the one spelling the Guard accepts.
        // "A parent or guardian is here" only where the alert offered it.
        let response = kind == .alert
            ? answer.flatMap(AlertResponse.init(_:)).flatMap { $0 == .guardianHere && !shown.offersGuardianHere ? nil : $0 }?.wire
            : answer
        let parameters = Guard.Answer.Parameters(id: prompt.id, response: response.map { SecretBytes($0) })
        try client.sendOneway(Guard.Answer.method, parameters: parameters.object)
    }
}

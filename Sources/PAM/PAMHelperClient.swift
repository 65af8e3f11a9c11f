#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Runs each PAM transaction in a short-lived helper process
/// (``PAMHelper``: this very program, started again with a hidden argument)
/// and relays its conversation, so a module that hangs (a directory server
/// down) or crashes costs one authentication, never a thread or the Guard
/// itself, and module state never accumulates in the long-lived process.
/// OpenSSH's privilege separation and polkit's agent helper work the same way.
///
/// The Guard keeps every deadline: when PAM gives neither a message nor its
/// result within the prompt timeout, the helper is killed and the
/// transaction fails as timed out; a helper that ends before its result
/// fails as ``PAMError/Reason/helperFailed``. Either way it is reaped.
package struct PAMHelperClient: Sendable {
    /// The helper's program: by default the running program itself
    /// (`/proc/self/exe`, which names the very file running even after an
    /// upgrade replaced it), so the two sides always speak the same protocol.
    package var executable: String
    /// How long a helper that sent its result may take to exit before it is killed.
    package var exitGrace: Duration

    package init(executable: String = "/proc/self/exe", exitGrace: Duration = .seconds(2)) {
        self.executable = executable
        self.exitGrace = exitGrace
    }

    /// The helper's whole environment: nothing of the Guard's.
    static let environment = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]

    /// Runs `request` in a new helper, relaying its messages to
    /// `conversation`; the calling thread blocks until PAM is done, the
    /// helper is killed, or it ends.
    /// - Throws: ``PAMError``: PAM's own, ``PAMError/Reason/timedOut`` when
    ///   PAM went silent for the prompt timeout, ``PAMError/Reason/helperFailed``
    ///   when the helper could not start or ended early.
    package func authenticateBlocking(_ request: PAMRequest, conversation: any PAMConversation) throws(PAMError) {
        let helper: HelperProcess
        let socket: FileDescriptor
        do throws(Errno) {
            let (mine, theirs) = try Socket.makePacketPair()
            helper = try HelperProcess.spawn(executable, arguments: [PAMHelper.modeArgument, String(getpid())],
                                             environment: Self.environment, descriptor: theirs.rawValue)
            theirs.close()
            socket = mine
        } catch {
            throw PAMHelperRelay.failure(.helperFailed, request, "the PAM helper process could not start: \(error)")
        }
        defer { helper.kill() }
        try PAMHelperRelay(request: request, socket: socket, helper: helper, exitGrace: exitGrace).run(conversation)
    }
}

/// One transaction's relay between a helper and the conversation.
private struct PAMHelperRelay {
    let request: PAMRequest
    let socket: FileDescriptor
    let helper: HelperProcess
    let exitGrace: Duration

    static func failure(_ reason: PAMError.Reason, _ request: PAMRequest, _ detail: String) -> PAMError {
        var error = PAMError(reason, service: request.service, user: request.user)
        error.detail = detail
        return error
    }

    private func failure(_ reason: PAMError.Reason, _ detail: String) -> PAMError {
        Self.failure(reason, request, detail)
    }

    /// Kills the helper for `what` it did.
    private func failed(_ what: String) -> PAMError {
        helper.kill()
        return failure(.helperFailed, "the PAM helper process (pid \(helper.pid)) \(what) and was killed")
    }

    func run(_ conversation: any PAMConversation) throws(PAMError) {
        do throws(Errno) {
            try send(PAMHelperWire.call(request))
        } catch {
            throw ended()
        }
        var buffer = [UInt8](repeating: 0, count: PAMHelperWire.maximumMessage)
        while true {
            let silentUntil = MonotonicInstant.now.advanced(by: request.promptTimeout)
            let ready: Int16?
            do throws(Errno) {
                ready = try Poll.wait(for: Int16(POLLIN), on: socket.rawValue, until: silentUntil)
            } catch {
                throw failed("could not be waited for: \(error)")
            }
            guard ready != nil else {
                helper.kill()
                throw failure(.timedOut, "the PAM stack of \(request.service) said nothing for \(request.promptTimeout) "
                    + "(a module that hangs?); its helper process (pid \(helper.pid)) was killed")
            }
            let length: Int
            do throws(Errno) {
                length = try Socket.receivePacket(socket.rawValue, into: &buffer)
            } catch where error.rawValue == ECONNRESET {
                throw ended()
            } catch {
                throw failed("could not be read from: \(error)")
            }
            guard length > 0 else { throw ended() }
            var parsed: Result<PAMHelperWire.HelperReply, PAMHelperWire.Malformed>?
            buffer.withUnsafeBytes { bytes in
                parsed = Result { () throws(PAMHelperWire.Malformed) in
                    try PAMHelperWire.helperReply(from: UnsafeRawBufferPointer(rebasing: bytes[0..<length]), for: request)
                }
            }
            let reply: PAMHelperWire.HelperReply
            switch parsed {
            case .success(let value)?: reply = value
            case .failure(let error)?: throw failed("spoke outside its interface (\(error))")
            case nil: throw failed("could not be read")
            }
            switch reply {
            case .message(let message):
                try relay(message, to: conversation)
            case .result(let outcome):
                // A module may still hang in pam_end: it gets a moment, then the kill.
                if (try? helper.waitForExit(until: .now.advanced(by: exitGrace))) == nil { helper.kill() }
                if let outcome { throw outcome }
                return
            }
        }
    }

    /// Shows one message of PAM's to the person and sends back the answer
    /// (the frame that holds it zeroed once sent); an ended conversation is
    /// sent back too, and PAM's result follows.
    private func relay(_ message: PAMMessage, to conversation: any PAMConversation) throws(PAMError) {
        let deadline = MonotonicInstant.now.advanced(by: request.promptTimeout)
        var answer: SecretBytes?
        var end: PAMConversationEnd?
        do throws(PAMConversationEnd) {
            answer = try conversation.respond(to: message, deadline: deadline)
            // An answer that arrives after the deadline is not accepted.
            if message.isPrompt && MonotonicInstant.now > deadline { throw .timedOut }
        } catch {
            answer = nil
            end = error
        }
        // A prompt answered with nothing is answered empty; a message to show is answered with nothing.
        if message.isPrompt && answer == nil && end == nil { answer = SecretBytes("") }
        var frame = PAMHelperWire.respond(message.isPrompt ? answer : nil, ending: end)
        defer { frame.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        do throws(Errno) {
            try send(frame)
        } catch {
            throw ended()
        }
    }

    private func send(_ packet: [UInt8]) throws(Errno) {
        try Socket.sendPacket(socket.rawValue, packet)
    }

    /// The helper hung up before its result: it crashed, or exited.
    private func ended() -> PAMError {
        let exit = (try? helper.waitForExit(until: .now.advanced(by: exitGrace))) ?? helper.kill()
        let how = exit.map { "\($0)" } ?? "hung up"
        return failure(.helperFailed, "the PAM helper process (pid \(helper.pid)) \(how) before PAM finished")
    }
}

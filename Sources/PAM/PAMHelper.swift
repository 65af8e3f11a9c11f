#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The PAM helper process: one PAM transaction for the Guard, which started
/// it with its socket as descriptor 3 and relays the conversation to the
/// person asked (as polkit's `polkit-agent-helper-1` does for polkitd). A
/// module that hangs or crashes takes only this process with it; the Guard
/// kills it at `PromptTimeout` and reaps it.
///
/// The helper holds nothing but that socket and standard error: no store, no
/// listening socket, an environment of `PATH` only, and of the Guard's
/// capabilities only `CAP_DAC_READ_SEARCH`. Answers arrive as bytes
/// and are zeroed once PAM has them; the process ends after one transaction.
package enum PAMHelper {
    /// The hidden argument that makes `familycontrolsd` the helper.
    package static let modeArgument = "--pam-helper"
    /// Where the helper finds its socket.
    static let socketDescriptor: CInt = 3

    /// Runs the one transaction the Guard asks for on descriptor 3 and sends
    /// back its result.
    /// - Parameter arguments: what follows ``modeArgument``: the pid of the
    ///   Guard that started this process.
    /// - Returns: the exit status: 0 once the result is sent, 2 when started
    ///   by hand or spoken to outside the protocol.
    package static func main(_ arguments: [String]) -> Int32 {
        func fail(_ message: String) -> Int32 {
            writeToStandardError("familycontrolsd \(modeArgument): \(message)\n")
            return 2
        }
        guard arguments.count == 1, let parent = pid_t(arguments[0]),
              Socket.type(of: socketDescriptor) == Socket.sequencedPacketType else {
            return fail("this mode is only for familycontrolsd itself, which passes its pid and a socket as descriptor 3")
        }
        do throws(Errno) {
            // A module that hangs must not outlive the Guard's wait.
            guard try HelperProcess.endWithParent(parent) else { return fail("familycontrolsd has already ended") }
        } catch {
            return fail("\(error)")
        }
        do throws(Errno) {
            // The answers pass through this process: a crash must not write them to a core file.
            try CoreDumps.disable()
            // PAM reads what root owns (shadow, faillock, one-time codes): the Guard's
            // other capabilities (the immutable attribute, owners, ptrace) stay with it.
            try HelperProcess.dropCapabilitiesButReadSearch()
        } catch {
            return fail("cannot give up what the helper does not need: \(error)")
        }
        signal(SIGPIPE, SIG_IGN)

        let request: PAMRequest
        do {
            guard let bytes = try receive() else { return fail("no request came") }
            var parsed: Result<PAMRequest, PAMHelperWire.Malformed>?
            bytes.withUnsafeBytes { packet in
                parsed = Result { () throws(PAMHelperWire.Malformed) in try PAMHelperWire.request(from: packet) }
            }
            guard let parsed else { return fail("no request came") }
            request = try parsed.get()
        } catch {
            return fail("the request cannot be read: \(error)")
        }
        var outcome: PAMError?
        do throws(PAMError) {
            try PAMTransaction.run(request, conversation: SocketConversation(socket: socketDescriptor), readingModuleLog: true)
        } catch {
            outcome = error
        }
        do throws(Errno) {
            try Socket.sendPacket(socketDescriptor, PAMHelperWire.reply(result: outcome))
        } catch {
            return fail("cannot send the result: \(error)")
        }
        return 0
    }

    /// One message from the Guard, not secret; nil when the Guard closed its end.
    private static func receive() throws(Errno) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: PAMHelperWire.maximumMessage)
        let length = try Socket.receivePacket(socketDescriptor, into: &bytes)
        return length == 0 ? nil : Array(bytes[0..<length])
    }
}

/// The helper's side of the conversation: each message to the Guard, each
/// answer back as bytes, received into a buffer zeroed before it is freed.
private struct SocketConversation: PAMConversation {
    let socket: CInt

    /// The Guard keeps the deadline: it answers with the conversation's
    /// ending at it, and kills this process when PAM goes silent.
    func respond(to message: PAMMessage, deadline: MonotonicInstant) throws(PAMConversationEnd) -> SecretBytes? {
        do throws(Errno) {
            try Socket.sendPacket(socket, PAMHelperWire.reply(message))
        } catch {
            throw .canceled
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: PAMHelperWire.maximumMessage, alignment: 1)
        defer {
            SecretBytes.zero(buffer)
            buffer.deallocate()
        }
        let length: Int
        do throws(Errno) {
            length = try Socket.receivePacket(socket, into: buffer)
        } catch {
            throw .canceled
        }
        guard length > 0,
              let answer = try? PAMHelperWire.response(from: UnsafeRawBufferPointer(rebasing: buffer[0..<length])) else {
            throw .canceled
        }
        switch (answer.response, answer.ending) {
        case (_, .timedOut?): throw .timedOut
        case (_, .canceled?): throw .canceled
        case (let response?, nil) where message.isPrompt: return response
        case (nil, nil) where !message.isPrompt: return nil
        default: throw .canceled
        }
    }
}

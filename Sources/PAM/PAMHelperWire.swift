import GuardProtocol
import SystemKit
import Varlink

/// The messages between the Guard and its PAM helper, in the helper's
/// interface (`Config/org.familycontrols.conversation.varlink`, its types
/// generated into ``Conversation``): one Varlink message, ended by its NUL,
/// per packet of a `SOCK_SEQPACKET` pair. Like polkit's agent helper
/// protocol, with the answer a secret field, so it is never a `String`.
///
/// Guard to helper: one `Authenticate` call (with more), then one `Respond`
/// call (oneway) for each message. Helper to Guard: a reply with `message`
/// (continues) for each message PAM sends, then the last reply, with
/// `failure` or, when PAM succeeded, nothing.
package enum PAMHelperWire {
    /// The longest message either side sends or accepts.
    package static let maximumMessage = 64 * 1024

    /// Why bytes from the other side are not a message of the interface.
    package struct Malformed: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// What the helper sent: one of PAM's messages, or PAM's result.
    package enum HelperReply: Equatable {
        case message(PAMMessage)
        /// nil: PAM succeeded.
        case result(PAMError?)
    }

    // MARK: The Guard's calls

    package static func call(_ request: PAMRequest) -> [UInt8] {
        let (seconds, attoseconds) = request.promptTimeout.components
        let parameters = Conversation.Authenticate.Parameters(
            service: request.service, user: request.user, requestingUser: request.requestingUser, tty: request.tty,
            configurationDirectory: request.configurationDirectory,
            promptTimeoutMilliseconds: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return VarlinkCall(method: Conversation.Authenticate.method, parameters: parameters.object, more: true).encoded()
    }

    package static func request(from packet: UnsafeRawBufferPointer) throws(Malformed) -> PAMRequest {
        let call = try Self.call(in: packet, secretParameters: [])
        guard call.method == Conversation.Authenticate.method, call.more else {
            throw Malformed("\(call.method) is not Authenticate called with more")
        }
        let parameters: Conversation.Authenticate.Parameters
        do throws(ProtocolDecodingError) {
            parameters = try Conversation.Authenticate.Parameters(call.parameters, strict: true)
        } catch {
            throw Malformed("\(error)")
        }
        guard parameters.promptTimeoutMilliseconds > 0 else { throw Malformed("a prompt timeout that is not positive") }
        return PAMRequest(service: parameters.service, user: parameters.user, requestingUser: parameters.requestingUser,
                          tty: parameters.tty, configurationDirectory: parameters.configurationDirectory,
                          promptTimeout: .milliseconds(parameters.promptTimeoutMilliseconds))
    }

    /// The answer to one message, or how the conversation ended. The frame
    /// holds the answer: the caller zeroes it once sent.
    package static func respond(_ answer: SecretBytes?, ending: PAMConversationEnd?) -> [UInt8] {
        let parameters = Conversation.Respond.Parameters(response: ending == nil ? answer : nil,
                                                         ending: ending.map { $0 == .timedOut ? .timedOut : .canceled })
        return VarlinkCall(method: Conversation.Respond.method, parameters: parameters.object, oneway: true).encoded()
    }

    /// The Guard's answer in `packet`, parsed straight into secret bytes.
    package static func response(from packet: UnsafeRawBufferPointer) throws(Malformed) -> Conversation.Respond.Parameters {
        let call = try Self.call(in: packet, secretParameters: Conversation.secretFields)
        guard call.method == Conversation.Respond.method, call.oneway else { throw Malformed("\(call.method) is not Respond, oneway") }
        do throws(ProtocolDecodingError) {
            return try Conversation.Respond.Parameters(call.parameters, strict: true)
        } catch {
            throw Malformed("\(error)")
        }
    }

    // MARK: The helper's replies

    package static func reply(_ message: PAMMessage) -> [UInt8] {
        let style: Conversation.MessageStyle = switch message {
        case .secretPrompt: .secretPrompt
        case .textPrompt: .textPrompt
        case .info: .info
        case .error: .error
        }
        let reply = Conversation.Authenticate.Reply(message: Conversation.Message(style: style, text: message.text))
        return VarlinkReply(parameters: reply.object, continues: true).encoded()
    }

    /// PAM's result; nil: PAM succeeded.
    package static func reply(result error: PAMError?) -> [UInt8] {
        let failure = error.map { Conversation.Failure(reason: $0.reason, code: $0.code.map { Int64($0.rawValue) }, detail: $0.detail) }
        return VarlinkReply(parameters: Conversation.Authenticate.Reply(failure: failure).object).encoded()
    }

    package static func helperReply(from packet: UnsafeRawBufferPointer, for request: PAMRequest) throws(Malformed) -> HelperReply {
        guard packet.last == 0 else { throw Malformed("a message not ended by its NUL") }
        let reply: VarlinkReply
        do throws(VarlinkMessageError) {
            reply = try VarlinkReply(parsing: UnsafeRawBufferPointer(rebasing: packet.dropLast()))
        } catch {
            throw Malformed("not a Varlink reply: \(error)")
        }
        guard reply.error == nil else { throw Malformed("an error the interface does not declare") }
        let parameters: Conversation.Authenticate.Reply
        do throws(ProtocolDecodingError) {
            parameters = try Conversation.Authenticate.Reply(reply.parameters, strict: true)
        } catch {
            throw Malformed("\(error)")
        }
        switch (parameters.message, parameters.failure, reply.continues) {
        case (let message?, nil, true):
            let shown: PAMMessage = switch message.style {
            case .secretPrompt: .secretPrompt(message.text)
            case .textPrompt: .textPrompt(message.text)
            case .info: .info(message.text)
            case .error: .error(message.text)
            }
            return .message(shown)
        case (nil, let failure, false):
            guard let failure else { return .result(nil) }
            var error = PAMError(failure.reason, service: request.service, user: request.user)
            if let code = failure.code {
                guard let value = CInt(exactly: code) else { throw Malformed("a result code \(code)") }
                error.code = PAMResultCode(rawValue: value)
            }
            error.detail = failure.detail
            return .result(error)
        default:
            throw Malformed("a reply that is neither one message going on nor the last with the result")
        }
    }

    /// The call in `packet`, which must be one frame ended by its NUL.
    private static func call(in packet: UnsafeRawBufferPointer, secretParameters: Set<String>) throws(Malformed) -> VarlinkCall {
        guard packet.last == 0 else { throw Malformed("a message not ended by its NUL") }
        do throws(VarlinkMessageError) {
            return try VarlinkCall(parsing: UnsafeRawBufferPointer(rebasing: packet.dropLast()), secretParameters: secretParameters)
        } catch {
            throw Malformed("not a Varlink call: \(error)")
        }
    }
}

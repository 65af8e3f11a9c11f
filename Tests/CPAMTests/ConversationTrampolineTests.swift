import CPAM
import Glibc
import Testing

/// The C trampoline's bounds, driven directly with fabricated messages.
@Suite struct ConversationTrampolineTests {
    /// The reply callback's behaviour, chosen per test through the context pointer.
    final class Script {
        var replyLength: Int
        var fill: UInt8 = UInt8(ascii: "a")
        var cancel = false
        var calls = 0
        init(replyLength: Int) { self.replyLength = replyLength }
    }

    static let reply: cpam_reply_fn = { context, _, _, buffer, capacity, length in
        guard let context, let length else { return 1 }
        let script = Unmanaged<Script>.fromOpaque(context).takeUnretainedValue()
        script.calls += 1
        if script.cancel { return 1 }
        length.pointee = script.replyLength
        if let buffer, script.replyLength < capacity {
            for i in 0..<script.replyLength { buffer[i] = CChar(bitPattern: script.fill) }
        }
        return 0
    }

    /// Calls `cpam_converse` with `count` messages of `style`.
    func converse(count: Int, style: CInt = PAM_PROMPT_ECHO_OFF, script: Script) -> (CInt, [String?]) {
        let text = strdup("Password: ")
        defer { free(text) }
        var messages = (0..<max(count, 1)).map { _ in pam_message(msg_style: style, msg: text) }
        var state = cpam_conversation(reply: Self.reply, context: Unmanaged.passUnretained(script).toOpaque())
        return messages.withUnsafeMutableBufferPointer { buffer in
            var pointers: [UnsafePointer<pam_message>?] = (0..<max(count, 1)).map { UnsafePointer(buffer.baseAddress! + $0) }
            var responses: UnsafeMutablePointer<pam_response>?
            let status = pointers.withUnsafeMutableBufferPointer { list in
                cpam_converse(CInt(count), list.baseAddress, &responses, &state)
            }
            var replies: [String?] = []
            if let responses {
                for i in 0..<count {
                    replies.append(responses[i].resp.map { String(cString: $0) })
                    free(responses[i].resp)
                }
                free(responses)
            }
            return (status, replies)
        }
    }

    @Test func answersEachPromptWithAMallocedReply() {
        let (status, replies) = converse(count: 3, script: Script(replyLength: 5))
        #expect(status == PAM_SUCCESS)
        #expect(replies == ["aaaaa", "aaaaa", "aaaaa"])
    }

    @Test func acceptsTheLongestReplyThatFits() {
        let (status, replies) = converse(count: 1, script: Script(replyLength: Int(PAM_MAX_RESP_SIZE) - 1))
        #expect(status == PAM_SUCCESS)
        #expect(replies.first??.utf8.count == Int(PAM_MAX_RESP_SIZE) - 1)
    }

    @Test(arguments: [Int(PAM_MAX_RESP_SIZE), Int(PAM_MAX_RESP_SIZE) + 1, 1 << 20])
    func rejectsAnOverlongReply(length: Int) {
        let (status, replies) = converse(count: 2, script: Script(replyLength: length))
        #expect(status == PAM_CONV_ERR)
        #expect(replies.isEmpty)
    }

    @Test func rejectsTooManyMessages() {
        let script = Script(replyLength: 1)
        let (status, _) = converse(count: Int(PAM_MAX_NUM_MSG) + 1, script: script)
        #expect(status == PAM_CONV_ERR)
        #expect(script.calls == 0)
    }

    @Test func acceptsTheMostMessagesAllowed() {
        let (status, replies) = converse(count: Int(PAM_MAX_NUM_MSG), script: Script(replyLength: 1))
        #expect(status == PAM_SUCCESS)
        #expect(replies.count == Int(PAM_MAX_NUM_MSG))
    }

    @Test func rejectsZeroMessages() {
        let (status, _) = converse(count: 0, script: Script(replyLength: 1))
        #expect(status == PAM_CONV_ERR)
    }

    @Test func rejectsAReplyWithAnEmbeddedNUL() {
        let script = Script(replyLength: 4)
        script.fill = 0
        let (status, _) = converse(count: 1, script: script)
        #expect(status == PAM_CONV_ERR)
    }

    @Test func cancelEndsTheConversation() {
        let script = Script(replyLength: 1)
        script.cancel = true
        let (status, replies) = converse(count: 2, script: script)
        #expect(status == PAM_CONV_ERR)
        #expect(replies.isEmpty)
        #expect(script.calls == 1)
    }

    @Test func rejectsBinaryPrompts() {
        let (status, _) = converse(count: 1, style: 7 /* PAM_BINARY_PROMPT */, script: Script(replyLength: 1))
        #expect(status == PAM_CONV_ERR)
    }

    @Test func infoMessagesGetNoReply() {
        let (status, replies) = converse(count: 2, style: PAM_TEXT_INFO, script: Script(replyLength: 3))
        #expect(status == PAM_SUCCESS)
        #expect(replies == [nil, nil])
    }

    @Test func zeroingClearsTheBuffer() {
        var bytes: [UInt8] = Array("secret".utf8)
        bytes.withUnsafeMutableBytes { cpam_zero($0.baseAddress, $0.count) }
        #expect(bytes == [0, 0, 0, 0, 0, 0])
    }
}

import GuardProtocol
import PAM
import SystemKit
import Testing

/// The Guard reads what its PAM helper sends as it reads a client, in the
/// helper's interface (`Config/org.familycontrols.conversation.varlink`): a
/// request, a message, an answer and a result survive the trip whole, the
/// answer as secret bytes, and bytes outside the interface are refused with
/// the reason, never half-read.
@Suite struct PAMHelperWireTests {
    static let request = PAMRequest(service: "familycontrols-guardian", user: "bob", requestingUser: "alice", tty: nil,
                                    configurationDirectory: "/srv/pam.d", promptTimeout: .milliseconds(4_500))

    private func frame(_ json: String) -> [UInt8] { Array(json.utf8) + [0] }

    private func helperReply(_ bytes: [UInt8]) throws -> PAMHelperWire.HelperReply {
        try bytes.withUnsafeBytes { try PAMHelperWire.helperReply(from: $0, for: Self.request) }
    }

    @Test func aRequestArrivesWhole() throws {
        let bytes = PAMHelperWire.call(Self.request)
        #expect(try bytes.withUnsafeBytes { try PAMHelperWire.request(from: $0) } == Self.request)
    }

    @Test func aResultArrivesWholeAndSuccessIsNoError() throws {
        var error = PAMError(.helperFailed, service: Self.request.service, user: Self.request.user,
                             code: PAMResultCode(rawValue: 7))
        error.detail = "the PAM helper process (pid 12) was killed by SIGSEGV before PAM finished"
        #expect(try helperReply(PAMHelperWire.reply(result: error)) == .result(error))
        #expect(try helperReply(PAMHelperWire.reply(result: nil)) == .result(nil))
    }

    @Test(arguments: [PAMMessage.secretPrompt("Password: "), .textPrompt("Name: "), .info("Hello"), .error("No")])
    func everyMessageStyleArrivesWhole(message: PAMMessage) throws {
        #expect(try helperReply(PAMHelperWire.reply(message)) == .message(message))
    }

    @Test func anAnswerArrivesAsSecretBytesAndAnEndingAsItself() throws {
        let answer = PAMHelperWire.respond(SecretBytes("pa\"ss\\wörd"), ending: nil)
        let parsed = try answer.withUnsafeBytes { try PAMHelperWire.response(from: $0) }
        #expect(parsed.response == SecretBytes("pa\"ss\\wörd") && parsed.ending == nil)
        let ended = PAMHelperWire.respond(SecretBytes("ignored"), ending: .timedOut)
        let parsedEnd = try ended.withUnsafeBytes { try PAMHelperWire.response(from: $0) }
        #expect(parsedEnd.response == nil && parsedEnd.ending == .timedOut)
    }

    /// Every reason PAM gives travels as the interface's own case: the
    /// reasons are the interface's enum, so the list cannot drift.
    @Test func everyReasonTravels() throws {
        for reason in PAMError.Reason.allCases {
            let error = PAMError(reason, service: Self.request.service, user: Self.request.user)
            #expect(try helperReply(PAMHelperWire.reply(result: error)) == .result(error))
        }
        #expect(PAMError.Reason.allCases.count == 15)
    }

    @Test(arguments: [
        (#"{"parameters":{"failure":{"reason":"abc"}}}"#, "failure.reason"),
        (#"{"parameters":{"failure":{"reason":"timedOut","code":"x"}}}"#, "failure.code"),
        (#"{"parameters":{"failure":{"reason":"timedOut","code":99999999999}}}"#, "a result code"),
        (#"{"parameters":{"message":{"style":"shout","text":"x"}},"continues":true}"#, "message.style"),
        (#"{"parameters":{"message":{"style":"info","text":"x"}}}"#, "neither one message going on"),
        (#"{"parameters":{"failure":{"reason":"timedOut"}},"continues":true}"#, "neither one message going on"),
        (#"{"parameters":{"extra":1}}"#, "extra"),
        (#"{"error":"org.example.Failed","parameters":{}}"#, "an error the interface does not declare"),
        (#"{"parameters":"#, "not a Varlink reply"),
    ])
    func aMalformedReplyIsRefusedWithItsReason(json: String, reason: String) {
        do {
            _ = try helperReply(frame(json))
            Issue.record("accepted \(json)")
        } catch {
            #expect((error as? PAMHelperWire.Malformed)?.description.contains(reason) == true, "\(error)")
        }
    }

    @Test(arguments: [
        #"{"method":"org.familycontrols.conversation.Authenticate","parameters":{"service":"svc","promptTimeoutMilliseconds":1000},"more":true}"#,
        #"{"method":"org.familycontrols.conversation.Authenticate","parameters":{"service":"svc","user":"bob","promptTimeoutMilliseconds":0},"more":true}"#,
        #"{"method":"org.familycontrols.conversation.Authenticate","parameters":{"service":"svc","user":"bob","promptTimeoutMilliseconds":1000}}"#,
        #"{"method":"org.familycontrols.conversation.Respond","parameters":{},"oneway":true}"#,
    ])
    func aRequestWithoutAUserATimeoutOrMoreIsRefused(json: String) {
        #expect(throws: PAMHelperWire.Malformed.self) { try frame(json).withUnsafeBytes { try PAMHelperWire.request(from: $0) } }
    }

    @Test func anAnswerNotEndedByItsNULOrNotRespondIsRefused() {
        var answer = PAMHelperWire.respond(SecretBytes("secret"), ending: nil)
        answer.removeLast()
        #expect(throws: PAMHelperWire.Malformed.self) { try answer.withUnsafeBytes { try PAMHelperWire.response(from: $0) } }
        let request = PAMHelperWire.call(Self.request)
        #expect(throws: PAMHelperWire.Malformed.self) { try request.withUnsafeBytes { try PAMHelperWire.response(from: $0) } }
    }
}

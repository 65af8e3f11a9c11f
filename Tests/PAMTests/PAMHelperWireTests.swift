import PAM
import Testing

/// The Guard reads what its PAM helper sends as it reads a client: a request
/// and a result survive the trip whole, and bytes outside the protocol are
/// refused with the reason, never half-read.
@Suite struct PAMHelperWireTests {
    static let request = PAMRequest(service: "familycontrols-guardian", user: "bob", requestingUser: "alice", tty: nil,
                                    configurationDirectory: "/srv/pam.d", promptTimeout: .milliseconds(4_500))

    @Test func aRequestArrivesWhole() throws {
        let bytes = PAMHelperWire.encode(Self.request)
        #expect(bytes.first == PAMHelperWire.request)
        #expect(try PAMHelperWire.decodeRequest(bytes.dropFirst()) == Self.request)
    }

    @Test func aResultArrivesWholeAndSuccessIsNoError() throws {
        var error = PAMError(.helperFailed, service: Self.request.service, user: Self.request.user,
                             code: PAMResultCode(rawValue: 7))
        error.detail = "the PAM helper process (pid 12) was killed by SIGSEGV before PAM finished"
        #expect(try PAMHelperWire.decodeResult(PAMHelperWire.encode(error).dropFirst(), for: Self.request) == error)
        #expect(try PAMHelperWire.decodeResult(PAMHelperWire.encode(nil).dropFirst(), for: Self.request) == nil)
    }

    @Test(arguments: [
        ([UInt8](), "a message with 0 of 3 fields"),
        ([2], "a field with presence byte 2"),
        ([1, 0], "a field cut short"),
        ([1, 0, 5, 0x61], "a field cut short"),
        ([1, 0, 1, 0xFF, 0, 0], "a field that is not UTF-8"),
        ([1, 0, 1, 0x61, 0, 0, 9], "1 bytes after the last field"),
        ([1, 0, 3, 0x61, 0x62, 0x63, 0, 0], "an unknown result \"abc\""),
        ([1, 0, 6] + Array("timedOut".utf8.prefix(6)) + [1, 0, 1, 0x78, 0], "an unknown result \"timedO\""),
        ([1, 0, 8] + Array("timedOut".utf8) + [1, 0, 1, 0x78, 0], "a result code \"x\""),
    ] as [([UInt8], String)])
    func aMalformedResultIsRefusedWithItsReason(body: [UInt8], reason: String) {
        #expect(throws: PAMHelperWire.Malformed.self) { try PAMHelperWire.decodeResult(body[...], for: Self.request) }
        do {
            _ = try PAMHelperWire.decodeResult(body[...], for: Self.request)
        } catch {
            #expect((error as? PAMHelperWire.Malformed)?.description == reason)
        }
    }

    @Test func aRequestWithoutAUserOrATimeoutIsRefused() {
        let noUser = PAMHelperWire.encode(kind: PAMHelperWire.request, fields: ["svc", nil, nil, nil, nil, "1000"])
        let noTimeout = PAMHelperWire.encode(kind: PAMHelperWire.request, fields: ["svc", "bob", nil, nil, nil, "0"])
        for bytes in [noUser, noTimeout] {
            #expect(throws: PAMHelperWire.Malformed.self) { try PAMHelperWire.decodeRequest(bytes.dropFirst()) }
        }
    }

    @Test func anUnknownMessageStyleIsRefused() throws {
        #expect(throws: PAMHelperWire.Malformed.self) { try PAMHelperWire.message(style: 4, text: "Password: ") }
        #expect(try PAMHelperWire.message(style: PAMHelperWire.style(of: .secretPrompt("Password: ")), text: "Password: ")
            == .secretPrompt("Password: "))
    }
}

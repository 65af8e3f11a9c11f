@testable import ChildInspection
import Testing

@Suite struct OpenPGPKeyringTests {
    @Test(arguments: [("", "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"), ("abc", "A9993E364706816ABA3E25717850C26C9CD0D89D"),
                      (String(repeating: "a", count: 1000), "291E9A6C66994949B57BA5E650361E98FC36B1BA")])
    func sha1MatchesItsKnownAnswers(_ message: String, _ digest: String) {
        #expect(OstreeCommitObject.hex(SHA1.digest(Array(message.utf8))[...]).uppercased() == digest)
    }

    /// A v4 public-key packet (new format, tag 6) of `body`, then a user ID packet.
    private func key(_ body: [UInt8]) -> [UInt8] {
        [0xC6, UInt8(body.count)] + body + [0xCD, 3] + Array("abc".utf8)
    }

    @Test func eachKeyHasItsFingerprintAndItsPacketsButNoTrustPacket() throws {
        let first = key([4, 1, 2, 3, 4, 1, 0, 8, 0xAA])
        let second = key([4, 5, 6, 7, 8, 1, 0, 8, 0xBB])
        let keyring = try OpenPGPKeyringPackets(parsing: first + second + [0xCC, 1, 0])   // a trust packet, dropped
        #expect(keyring.keys.count == 2)
        #expect(keyring.keys.allSatisfy { $0.fingerprint?.utf8.count == 40 })
        #expect(keyring.keys[0].packets == [0..<11, 11..<16])
        #expect(keyring.keys[1].packets == [16..<27, 27..<32])
    }

    @Test(arguments: [([0x00], "not OpenPGP packets"), ([0xC6, 9, 4], "longer than the keyring"),
                      ([0xCD, 1, 0x41], "before any key"), ([0xC6, 230], "partial length"), ([0x9B], "indeterminate")])
    func aMalformedKeyringIsRefused(_ bytes: [UInt8], _ reason: String) {
        do {
            _ = try OpenPGPKeyringPackets(parsing: bytes)
            Issue.record("taken")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }
}

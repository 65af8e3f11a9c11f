@testable import FamilyCtl
import FamilyCtlDesktop
import Foundation
import SystemKit
import Testing
import TestSupport

/// The QR code and URI `familyctl code enroll` shows, and the tests' own
/// RFC 6238 codes they are checked with.
@Suite struct OneTimeCodeTests {
    /// RFC 6238, Appendix B: SHA-1, the 20-byte ASCII secret, 8 digits.
    @Test("RFC 6238 test vectors", arguments: [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"),
        (1_234_567_890, "89005924"), (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ] as [(UInt64, String)])
    func totpMatchesTheRFC(time: UInt64, expected: String) {
        #expect(OneTimeCode.totp(secret: Array("12345678901234567890".utf8), time: time, digits: 8) == expected)
    }

    /// RFC 4226, Appendix D: the same secret, counters 0 to 9, 6 digits.
    @Test func hotpMatchesTheRFC() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        let codes = (0..<10).map { OneTimeCode.hotp(secret: Array("12345678901234567890".utf8), counter: UInt64($0)) }
        #expect(codes == expected)
    }

    @Test func base32RoundTripsRFC4648Vectors() {
        for (text, encoded) in [("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
                                ("foobar", "MZXW6YTBOI")] {
            #expect(OneTimeCode.base32Decode(encoded) == Array(text.utf8))
            #expect(OneTimeCode.base32Decode(encoded + "======") == Array(text.utf8))
        }
        #expect(OneTimeCode.base32Decode("M1") == nil)
    }

    /// The URI authenticator apps read: label, secret, issuer, and the
    /// parameters spelled out; the user's name percent-encoded.
    @Test func theURIIsTheKeyURIFormat() {
        let uri = FamilyCtl.otpauthURI(secret: SecretBytes("JBSWY3DPEHPK3PXP"), user: "bob", host: "lab 1")
        let text = uri.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text == "otpauth://totp/FamilyControls:bob%40lab%201?secret=JBSWY3DPEHPK3PXP"
            + "&issuer=FamilyControls&algorithm=SHA1&digits=6&period=30")
    }

    /// libqrencode's own command draws the same symbol for the same text,
    /// options and margin: the module grid is libqrencode's, and the drawing
    /// is the one `qrencode -t ANSIUTF8` makes, both colours set on every line.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/qrencode"),
                   "needs qrencode (Debian package; Config/install.sh installs it)"),
          arguments: ["otpauth://totp/FamilyControls:bob%40lab?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=FamilyControls"
                      + "&algorithm=SHA1&digits=6&period=30", "hello"])
    func theTerminalDrawingIsLibqrencodesSymbol(text: String) async throws {
        let code = try #require(QRCode(SecretBytes(text)))
        let drawn = code.terminalText()
        let reference = try await run("/usr/bin/qrencode", ["-t", "ANSIUTF8", "-l", "M", "-m", "4", text])
        #expect(reference.status == 0, "\(reference.standardError)")
        #expect(drawn == reference.standardOutput)
        // Its size: the version's width (17 + 4 × version) and the quiet zone, two module rows a line.
        #expect((code.width - 17) % 4 == 0 && code.width >= 21)
        let lines = drawn.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == (code.width + 8 + 1) / 2)
        #expect(lines.allSatisfy { $0.hasPrefix("\u{1B}[40;37;1m") && $0.hasSuffix("\u{1B}[0m") })
        #expect(lines.allSatisfy { $0.dropFirst("\u{1B}[40;37;1m".count).dropLast("\u{1B}[0m".count).count == code.width + 8 })
    }
}

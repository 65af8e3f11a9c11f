import SystemKit
import Testing
import UpdateSignature

@Suite struct UpdateKeyTests {
    @Test func aDeclarationRoundTrips() throws {
        let key = try UpdateSigningKey.generate().publicKey
        #expect(key.declaration.hasPrefix("ed25519:"))
        #expect(key.declaration.utf8.count == 8 + 44)
        #expect(try UpdateKey(declaration: key.declaration) == key)
    }

    @Test func aSecretKeyFileRoundTripsAndKeepsItsPublicHalf() throws {
        let key = try UpdateSigningKey.generate()
        let reread = try UpdateSigningKey(fileText: key.fileText)
        #expect(reread.publicKey == key.publicKey)
    }

    @Test func aSecretKeyFileWhosePublicHalfIsNotItsOwnIsRefused() throws {
        var text = try UpdateSigningKey.generate().fileText
        // The last base64 characters before "==\n" belong to the public half.
        let index = text.count - 8
        text[index] = text[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: UpdateSignatureError.malformedSecretKey) { try UpdateSigningKey(fileText: text) }
    }

    /// 32 zero bytes, base64: 43 characters and one `=`.
    static let zeros = String(repeating: "A", count: 43) + "="

    static let malformed: [(String, String)] = [
        ("", "no algorithm"),
        (zeros, "no algorithm"),
        ("ED25519:" + zeros, "the algorithm's case"),
        ("rsa:" + zeros, "another algorithm"),
        ("ed25519:", "no key"),
        ("ed25519:" + String(repeating: "A", count: 43), "no padding"),
        ("ed25519: " + zeros, "a space before"),
        ("ed25519:" + zeros + " ", "a space after"),
        ("ed25519:" + zeros + "AAAA", "text after the padding"),
        ("ed25519:" + String(repeating: "A", count: 42) + "==", "31 bytes"),
        ("ed25519:" + String(repeating: "A", count: 44) + "AAA=", "35 bytes"),
        ("ed25519:" + String(repeating: "A", count: 22) + "\n" + String(repeating: "A", count: 21) + "=", "a newline"),
        ("ed25519:" + String(repeating: "A", count: 42) + "_=", "the URL alphabet"),
        ("ed25519:" + String(repeating: "A", count: 42) + "B=", "bits past the end"),
    ]

    @Test(arguments: malformed)
    func aMalformedDeclarationIsRefused(_ declaration: String, _ why: String) {
        #expect(throws: UpdateSignatureError.self, "\(why)") { try UpdateKey(declaration: declaration) }
    }

    @Test func theZeroKeyParses() throws {
        #expect(try UpdateKey(declaration: "ed25519:" + Self.zeros).bytes == [UInt8](repeating: 0, count: 32))
    }
}

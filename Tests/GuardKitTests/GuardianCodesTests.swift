@testable import GuardKit
import Foundation
import SystemKit
import Testing
import TestSupport
@testable import GuardPolicy

/// The users file `familyctl code enroll` writes for pam_oath.
@Suite struct GuardianCodesTests {
    @Test func enrolmentWritesOneLineAGuardianReplacesItAndKeepsTheOthers() async throws {
        try await withTemporaryDirectory { folder in
            let file = "\(folder)/oath/users.oath"
            let codes = GuardianCodes()
            #expect(try codes.enrolled(in: file).isEmpty)
            // pam_oath's own additions to another guardian's line (counter, last code, time) are kept.
            try FileManager.default.createDirectory(atPath: "\(folder)/oath", withIntermediateDirectories: false)
            let other = "HOTP/T30/6 carol - 3132 0 123456 2026-12-01T10:00:00L\n# a comment\n"
            try other.write(toFile: file, atomically: false, encoding: .utf8)

            let first = try codes.enroll("bob", in: file)
            let second = try codes.enroll("bob", in: file)
            #expect(first.count == 20 && first != second)
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let hex = second.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
            #expect(text == other + "HOTP/T30/6\tbob\t-\t\(hex)\n")
            var status = stat()
            #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
            #expect(try codes.enrolled(in: file) == ["carol", "bob"])

            #expect(try codes.remove("bob", in: file))
            #expect(try !codes.remove("bob", in: file))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == other)
        }
    }

    @Test func aFileThatIsTooLargeIsRefused() async throws {
        try await withTemporaryDirectory { folder in
            let file = "\(folder)/users.oath"
            try Data(repeating: 0x61, count: GuardianCodes.maximumFileSize + 1).write(to: URL(fileURLWithPath: file))
            for attempt in [{ _ = try GuardianCodes().enrolled(in: file) }, { _ = try GuardianCodes().enroll("bob", in: file) }]
                as [() throws -> Void] {
                do {
                    try attempt()
                    Issue.record("a file over 1 MiB was read")
                } catch {
                    #expect("\(error)".contains("the one-time code file \(file) is larger than 1 MiB"))
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)).count == GuardianCodes.maximumFileSize + 1)
        }
    }

    @Test("base32 as RFC 4648 writes it, without padding", arguments: [
        ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI"),
    ])
    func base32(text: String, encoded: String) {
        #expect(Base32.encode(SecretBytes(text)) == SecretBytes(encoded))
    }
}

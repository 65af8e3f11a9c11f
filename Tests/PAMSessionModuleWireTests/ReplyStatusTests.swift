import Foundation
import pam_familycontrols
import Testing
import TestSupport

/// How the PAM session module reads the Guard's reply: as JSON, at its top
/// level. A word "error" inside the parameters is not an error; an error
/// reply is one whose object has the key `error`; anything else is refused.
@Suite struct ReplyStatusTests {
    private func status(_ reply: String) -> (Int32, String) {
        var error = [CChar](repeating: 0, count: 64)
        let bytes = Array(reply.utf8)
        let result = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { pam_familycontrols_reply_status($0.baseAddress, $0.count, &error, error.count) }
        }
        return (result, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    @Test(arguments: [
        #"{"parameters":{}}"#,
        #"{}"#,
        " { \"parameters\" : { \"note\" : \"\\\"error\\\" is a word\", \"list\": [1, -2.5e3, true, null, {\"error\": 1}] } } ",
        #"{"parameters":{"error":"not the reply's"},"continues":false}"#,
    ])
    func aReplyWithoutATopLevelErrorIsASuccess(reply: String) {
        #expect(status(reply).0 == 0, "\(reply)")
    }

    @Test func anErrorReplyGivesItsName() {
        let (result, name) = status(#"{"error":"org.familycontrols.guard.NotAllowed","parameters":{"reason":"root only"}}"#)
        #expect(result == 1)
        #expect(name == "org.familycontrols.guard.NotAllowed")
        // A name longer than the room is cut, still ended.
        let long = String(repeating: "x", count: 100)
        let (cut, truncated) = status("{\"parameters\":{},\"error\":\"\(long)\"}")
        #expect(cut == 1)
        #expect(truncated == String(repeating: "x", count: 63))
    }

    @Test(arguments: [
        "", "   ", "[]", #""error""#, "{", #"{"error"}"#, #"{"error":}"#, #"{"parameters":{}"#, #"{"parameters":{}} x"#,
        #"{"parameters":{},}"#, "{\"parameters\":\"a\nb\"}", #"{"error":1}"#, String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
        "{\"parameters\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
    ])
    func whatIsNotOneJSONObjectIsRefused(reply: String) {
        #expect(status(reply).0 == -1, "\(reply)")
    }
}

/// The module's names of the interface come from the interface file:
/// the checked-in header is what the generator writes from it today, and
/// the module spells no method or parameter name itself.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: productPath("generate-protocol")),
                "needs `swift build`'s generate-protocol"))
struct GeneratedHeaderTests {
    static let header = "\(packageRoot)/Sources/pam_familycontrols/familycontrols_guard_interface.h"

    @Test func theCheckedInHeaderIsWhatTheInterfaceFileGenerates() throws {
        let output = NSTemporaryDirectory() + "familycontrols-header-\(UUID().uuidString).h"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let generator = Process()
        generator.executableURL = URL(fileURLWithPath: productPath("generate-protocol"))
        generator.arguments = ["--c-header", "\(packageRoot)/Config/org.familycontrols.guard.varlink", output,
                               "OpenSession", "CloseSession"]
        try generator.run()
        generator.waitUntilExit()
        #expect(generator.terminationStatus == 0)
        let generated = try String(contentsOfFile: output, encoding: .utf8)
        let checkedIn = try String(contentsOfFile: Self.header, encoding: .utf8)
        #expect(generated == checkedIn, """
            Sources/pam_familycontrols/familycontrols_guard_interface.h is stale: run
            .build/debug/generate-protocol --c-header Config/org.familycontrols.guard.varlink \
            Sources/pam_familycontrols/familycontrols_guard_interface.h OpenSession CloseSession
            """)
    }

    @Test func theModuleSpellsNoNameOfTheInterface() throws {
        let folder = "\(packageRoot)/Sources/pam_familycontrols"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".c") }
        #expect(files.sorted() == ["account.c", "limits_file.c", "local_time.c", "login_limits.c", "pam_familycontrols.c", "reply.c"])
        let source = try files.map { try String(contentsOfFile: "\(folder)/\($0)", encoding: .utf8) }.joined()
        for name in ["org.familycontrols.guard", "\"token\"", "\"user\"", "\"service\"", "\"tty\"", "\"runtimeDirectory\"",
                     "\"display\"", "\"waylandDisplay\"", "\"bus\"", "\"sessionID\"", "\"error\"", "\"parameters\""] {
            #expect(!source.contains(name), "the module spells \(name) itself")
        }
        let header = try String(contentsOfFile: Self.header, encoding: .utf8)
        #expect(header.contains("#define FAMILYCONTROLS_OPEN_SESSION_SESSION_ID \"sessionID\""))
    }
}

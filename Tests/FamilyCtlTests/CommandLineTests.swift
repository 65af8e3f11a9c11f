@testable import FamilyCtl
import SystemKit
import Testing
import Varlink

/// familyctl's own parts that need no Guard: where the socket comes from,
/// and how requests and authorizations are shown.
@Suite struct CommandLineTests {
    @Test("--socket is taken wherever it stands, in both spellings, and never after --", arguments: [
        (["status", "--socket", "/s"], "/s", ["status"]),
        (["--socket=/t", "requests", "--json"], "/t", ["requests", "--json"]),
        (["approve", "3"], nil, ["approve", "3"]),
        (["status", "--", "--socket", "/x"], nil, ["status", "--", "--socket", "/x"]),
    ] as [([String], String?, [String])])
    func socketOption(_ tokens: [String], _ socket: String?, _ rest: [String]) throws {
        var remaining = tokens
        #expect(try FamilyCtl.takeSocketOption(&remaining) == socket)
        #expect(remaining == rest)
    }

    @Test func aSocketOptionWithoutAValueIsAUsageError() {
        var tokens = ["status", "--socket"]
        #expect(throws: CommandFailure.self) { try FamilyCtl.takeSocketOption(&tokens) }
    }

    @Test func requestsShowEveryFieldAndEscapeWhatAChildChose() {
        let row: JSONObject = [
            "id": .int(7), "user": .string("alice"), "app": .string("org.example.Paint"),
            "name": .string("Paint\u{1b}[2J"), "path": .string("/home/alice/Applications/org.example.Paint"),
            "purpose": .string("revoke"), "created": .double(0), "expires": .double(900),
        ]
        let table = FamilyCtl.requestsTable([row])
        #expect(table.hasPrefix("ID  USER   APP"))
        #expect(table.contains("7   alice  org.example.Paint  Paint\\x1B[2J  be revoked"))
        #expect(!table.unicodeScalars.contains { $0.value == 0x1b })
        #expect(FamilyCtl.requestsTable([]) == "No requests are waiting for you.")
        let json = FamilyCtl.requestsJSON([row])
        #expect(json.contains("\"expires\":\"1970-01-01T00:15:00Z\""), "\(json)")
        #expect(json.contains("\"purpose\":\"revoke\""))
    }

    @Test func aVerbThatIsNoneIsAUsageError() {
        #expect(FamilyCtl.main(["frobnicate"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["approve"]) == ExitCode.usage.rawValue)
        #expect(FamilyCtl.main(["approve", "seven"]) == ExitCode.usage.rawValue)
    }
}

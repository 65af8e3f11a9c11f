@testable import FamilyCtl
import GuardProtocol
import Testing

/// What the agent writes to pinentry and to the notification server, and
/// what it reads back from pinentry.
@Suite struct AgentTextTests {
    @Test(arguments: [
        ("plain", "plain"),
        ("100% sure", "100%25 sure"),
        ("two\nlines\r", "two%0Alines%0D"),
        ("bell\u{07} and tab\t", "bell%07 and tab%09"),
        ("“quoted” ünïcode", "“quoted” ünïcode"),
    ])
    func assuanTextIsPercentEscaped(text: String, escaped: String) {
        #expect(Pinentry.escaped(text, limit: 1000) == escaped)
    }

    @Test func anEscapedTextIsCutAtAWholeCharacterWithinTheLimit() {
        let cut = Pinentry.escaped(String(repeating: "é%", count: 400), limit: 100)
        #expect(cut.utf8.count <= 100)
        #expect(cut.hasSuffix("%25") || cut.hasSuffix("é"))
        #expect(!Pinentry.escaped("%%%", limit: 7).hasSuffix("%"), "an escape was split")
    }

    @Test func aPinIsPercentDecodedAndABadEscapeRefused() {
        var out: [UInt8] = []
        #expect(Pinentry.unescape(Array("a%25b%0Ac".utf8), into: &out, limit: 100))
        #expect(out == Array("a%b\nc".utf8))
        for bad in ["%", "%4", "%zz", "ab%g0"] {
            var scratch: [UInt8] = []
            #expect(!Pinentry.unescape(Array(bad.utf8), into: &scratch, limit: 100), "\(bad)")
        }
        var long: [UInt8] = []
        #expect(!Pinentry.unescape(Array(repeating: UInt8(ascii: "x"), count: 11), into: &long, limit: 10))
    }

    @Test func theNotificationBodyEscapesMarkupAfterTheTerminalsEscaping() {
        let row = Guard.Request(id: 3, user: "alice", app: "org.example.App", name: "<b>Games</b> & \u{1B}[2J",
                                path: "/home/alice/Applications/<i>", purpose: .approve, created: 0, expires: 0)
        let body = NotificationAgent.body(row)
        #expect(body.hasPrefix("“&lt;b&gt;Games&lt;/b&gt; &amp; \\x1B[2J” (org.example.App) asks to provide parental controls "
                               + "for alice, at /home/alice/Applications/&lt;i&gt;."), "\(body)")
        #expect(!body.contains("<") && !body.contains(">") && !body.contains("\u{1B}"))
    }

    @Test func pinentryIsFoundFromPINENTRYOrOnThePath() {
        #expect(Pinentry.program(environment: ["PINENTRY": "/nonexistent/pinentry"]) == nil)
        #expect(Pinentry.program(environment: ["PINENTRY": "sh", "PATH": "/nonexistent:/bin"]) == "/bin/sh")
        #expect(Pinentry.program(environment: ["PATH": "relative:/nonexistent"]) == nil)
    }
}

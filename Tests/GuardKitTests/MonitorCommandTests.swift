import Glibc
@testable import GuardKit
import SystemKit
import Testing

/// `X-FamilyControls-Monitor=`: split as `Exec=` is, and kept inside the app's folder.
@Suite struct MonitorCommandTests {
    @Test func aCommandIsSplitAsExecIs() throws {
        let plain = try MonitorCommand(parsing: "bin/monitor --flag value")
        #expect(plain == MonitorCommand(program: "bin/monitor", arguments: ["--flag", "value"]))
        let quoted = try MonitorCommand(parsing: #""bin/my monitor" "a b" "q\"uote" "\$HOME" 100%%"#)
        #expect(quoted == MonitorCommand(program: "bin/my monitor", arguments: ["a b", "q\"uote", "$HOME", "100%"]))
        #expect(try MonitorCommand(parsing: "  monitor  ").arguments.isEmpty)
    }

    @Test(arguments: [
        ("", MonitorCommandError.empty),
        ("   ", .empty),
        ("/usr/bin/evil", .absoluteProgram("/usr/bin/evil")),
        ("../../bin/sh", .outsideTheApp("../../bin/sh")),
        ("bin/../../x", .outsideTheApp("bin/../../x")),
        ("bin//monitor", .outsideTheApp("bin//monitor")),
        ("./monitor", .outsideTheApp("./monitor")),
        ("monitor %f", .fieldCode),
        ("monitor %", .fieldCode),
        (#""bin/monitor"#, .unclosedQuote),
        (#""a\n""#, .badEscape),
        ("monitor\u{1}x", .controlCharacter),
        (String(repeating: "a ", count: 65), .tooLong),
        (String(repeating: "a", count: 4097), .tooLong),
    ])
    func aHostileCommandIsRefusedSayingWhy(_ value: String, _ expected: MonitorCommandError) {
        #expect(throws: expected) { try MonitorCommand(parsing: value) }
        #expect(!expected.description.isEmpty)
    }

    @Test func theDesktopEntryKeepsTheFirstMonitor() {
        let entry = DesktopEntry(parsing: """
            [Desktop Entry]
            X-FamilyControls-Monitor=bin/first
            X-FamilyControls-Monitor=bin/second
            [Desktop Action other]
            X-FamilyControls-Monitor=bin/action

            """)
        #expect(entry.monitor == "bin/first")
    }

    @Test func aSessionLogindKnowsIsCountedOnce() {
        func session(_ leader: pid_t, id: String?) -> LoginSession {
            LoginSession(user: "kid", uid: 1000, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                         waylandDisplay: nil, bus: nil, sessionID: id, leader: leader, openedAt: .now)
        }
        let merged = MonitorSessions.merge(logind: [session(10, id: "3")], pam: [session(10, id: "3"), session(20, id: nil),
                                                                              session(30, id: "9")])
        #expect(merged.map(\.name) == ["3", "pam-20", "pam-30"])
    }
}

import Foundation
@testable import GuardKit
import SystemKit
import Testing

/// The Guard's table of login sessions, with this test process as every leader.
@Suite struct LoginSessionsTests {
    private func session(uid: UInt32) -> LoginSession {
        LoginSession(user: "u\(uid)", uid: uid, service: "login", tty: nil, runtimeDirectory: nil, display: nil,
                     waylandDisplay: nil, bus: nil, sessionID: nil, leader: getpid(), openedAt: .now)
    }

    private func token(_ number: Int) -> String {
        let hex = String(number, radix: 16)
        return String(repeating: "0", count: 32 - hex.count) + hex
    }

    @Test func oneUserCannotFillTheTableForEveryone() throws {
        let sessions = LoginSessions(limit: 10, perUser: 3)
        let me = try #require(ProcessHandle.open(pid: getpid()))
        for number in 0..<3 { try sessions.open(session(uid: 1000), token: token(number), pidfd: me.rawValue) }
        #expect(throws: LoginSessionRefusal.fullForUser(3)) {
            try sessions.open(session(uid: 1000), token: token(3), pidfd: me.rawValue)
        }
        try sessions.open(session(uid: 1001), token: token(4), pidfd: me.rawValue)
        #expect(sessions.current().open.count == 4)
        #expect(throws: LoginSessionRefusal.tokenInUse) {
            try sessions.open(session(uid: 1002), token: token(4), pidfd: me.rawValue)
        }
        // Closed only by its own leader.
        #expect(sessions.close(token: token(0), from: getpid() + 1) == nil)
        #expect(sessions.close(token: token(0), from: getpid())?.uid == 1000)
        try sessions.open(session(uid: 1000), token: token(5), pidfd: me.rawValue)
    }
}

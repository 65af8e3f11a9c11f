import Foundation
@testable import GuardKit
import SystemKit
import Testing
@testable import GuardSessions
import GuardStore
import SQLite

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

    @Test func oneUserCannotFillTheTableForEveryoneAndTheirNewestLoginIsAlwaysKept() throws {
        let sessions = LoginSessions(limit: 6, perUser: 3, nestedPerUser: 2)
        let me = try #require(ProcessHandle.open(pid: getpid()))
        for number in 0..<3 { try sessions.open(session(uid: 1000), token: token(number), pidfd: me.rawValue) }
        // The fourth login is kept; the oldest is forgotten.
        let forgotten = try sessions.open(session(uid: 1000), token: token(3), pidfd: me.rawValue)
        #expect(forgotten != nil)
        #expect(sessions.current().open.count == 3)
        #expect(sessions.close(token: token(0), from: getpid()) == nil, "the oldest was forgotten")
        try sessions.open(session(uid: 1001), token: token(4), pidfd: me.rawValue)
        #expect(sessions.current().open.count == 4)
        #expect(throws: LoginSessionRefusal.tokenInUse) {
            try sessions.open(session(uid: 1002), token: token(4), pidfd: me.rawValue)
        }
        // Closed only by its own leader.
        #expect(sessions.close(token: token(1), from: getpid() + 1) == nil)
        #expect(sessions.close(token: token(1), from: getpid())?.uid == 1000)
        for number in 5..<8 { try sessions.open(session(uid: 1002), token: token(number), pidfd: me.rawValue) }
        #expect(sessions.current().open.count == 6)
        #expect(throws: LoginSessionRefusal.full(6)) {
            try sessions.open(session(uid: 1003), token: token(8), pidfd: me.rawValue)
        }
    }

    @Test func sessionsAUserOpensFromTheirOwnNeverCrowdOutTheirLogins() throws {
        let sessions = LoginSessions(limit: 100, perUser: 2, nestedPerUser: 3)
        let me = try #require(ProcessHandle.open(pid: getpid()))
        try sessions.open(session(uid: 1000), token: token(0), pidfd: me.rawValue)
        var nested = session(uid: 1000)
        nested.nested = true
        for number in 1..<40 { try sessions.open(nested, token: token(number), pidfd: me.rawValue) }
        let open = sessions.current().open
        #expect(open.count(where: \.nested) == 3)
        #expect(open.count(where: { !$0.nested }) == 1, "the login stays")
        try sessions.open(session(uid: 1000), token: token(100), pidfd: me.rawValue)
        #expect(sessions.current().open.count(where: { !$0.nested }) == 2, "and a later login is recorded")
    }

    @Test func aRestartedGuardTakesUpTheRecordedSessionsWhoseLeaderIsTheSameProcess() throws {
        try withStore { store, directory in
            let logger = Logger(label: "test")
            let me = try #require(ProcessHandle.open(pid: getpid()))
            let first = LoginSessions()
            #expect(first.keepRecord(in: store, logger: logger) == 0)
            var odd = session(uid: 1000)
            odd.tty = "pts/1 with spaces=and%percent"
            odd.display = ":0\n"
            odd.sessionID = "c7"
            try first.open(odd, token: token(1), pidfd: me.rawValue)
            try first.open(session(uid: 1001), token: token(2), pidfd: me.rawValue)
            #expect(try store.loginSessions().map(\.token) == [token(1), token(2)], "recorded in the store as they open")

            let second = LoginSessions()
            #expect(second.keepRecord(in: store, logger: logger) == 2)
            let restored = second.current().open
            #expect(restored.count == 2)
            #expect(restored.first { $0.uid == 1000 } == odd)
            #expect(second.close(token: token(1), from: getpid())?.tty == odd.tty)
            #expect(try store.loginSessions().map(\.token) == [token(2)], "a closed session leaves the store")

            // A leader that is no longer the same process (another start time) is not taken up.
            var recorded = try store.loginSessions()
            recorded[0].leaderStarted += 1
            try store.replaceLoginSessions(recorded)
            #expect(LoginSessions().keepRecord(in: store, logger: logger) == 0)
            // Nor one whose leader is some other process (pid 2 started at 0 ticks: not kthreadd's start), written behind its back.
            let database = try SQLiteDatabase(path: directory + "/familycontrols.db")
            try database.execute("INSERT INTO login_sessions VALUES ('\(token(3))', 'u', 1, 'login', NULL, NULL, NULL, NULL, "
                + "NULL, NULL, 2, 999999999, 0, 0)")
            #expect(LoginSessions().keepRecord(in: store, logger: logger) == 0)
        }
    }
}

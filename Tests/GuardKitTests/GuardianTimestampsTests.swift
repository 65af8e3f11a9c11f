#if canImport(Glibc)
import Glibc
#endif
@testable import GuardKit
import SystemKit
import Testing
@testable import GuardIdentity
@testable import GuardPolicy

@Suite struct GuardianTimestampsTests {
    private func session(_ id: Int32, uid: uid_t = 1000) -> TerminalSession {
        TerminalSession(uid: uid, terminal: 0x8800, sessionID: id, leaderStart: 4242)
    }

    @Test func anAuthenticationCoversItsOwnSessionOnlyAndNeverWithAZeroTimeout() {
        let timestamps = GuardianTimestamps()
        #expect(!timestamps.covers(session(7), within: .seconds(300)))
        timestamps.record(session(7))
        #expect(timestamps.covers(session(7), within: .seconds(300)))
        #expect(!timestamps.covers(session(8), within: .seconds(300)), "another session")
        #expect(!timestamps.covers(session(7, uid: 1001), within: .seconds(300)), "another user on the same terminal")
        #expect(!timestamps.covers(session(7), within: .zero))
    }

    @Test func anAuthenticationOlderThanTheTimeoutCoversNothing() throws {
        let timestamps = GuardianTimestamps()
        timestamps.record(session(7))
        usleep(30_000)
        #expect(!timestamps.covers(session(7), within: .milliseconds(20)))
        #expect(!timestamps.covers(session(7), within: .seconds(300)), "an expired timestamp is forgotten")
    }

    @Test func beyondItsCapacityTheOldestSessionIsForgotten() {
        let timestamps = GuardianTimestamps(capacity: 8)
        for id in 1...Int32(timestamps.capacity + 1) { timestamps.record(session(id)) }
        #expect(!timestamps.covers(session(1), within: .seconds(300)))
        #expect(timestamps.covers(session(2), within: .seconds(300)))
        #expect(timestamps.covers(session(Int32(timestamps.capacity + 1)), within: .seconds(300)))
    }
}

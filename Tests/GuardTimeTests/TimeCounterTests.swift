import Foundation
import GuardStore
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// Counting a child's session time: once however many sessions, per local
/// day, resumed from the store.
@Suite struct TimeCounterTests {
    /// A moment `offset` seconds after a local midnight, and that midnight's day.
    private func aroundMidnight(_ offset: Double) -> (time: UnixTime, dayBefore: String, dayAfter: String) {
        let now = UnixTime.now
        let moment = LocalMoment(now)
        // Two days ahead, to stay clear of today, at local midnight.
        var midnight = now.seconds - Double(moment.minute * 60 + moment.second) + 2 * 86_400
        midnight -= Double(LocalMoment(UnixTime(seconds: midnight)).minute * 60 + LocalMoment(UnixTime(seconds: midnight)).second)
        return (UnixTime(seconds: midnight + offset), LocalMoment(UnixTime(seconds: midnight - 1)).day,
                LocalMoment(UnixTime(seconds: midnight + 1)).day)
    }

    /// Noon of a day two days ahead: counting from it never crosses a midnight.
    private var noon: UnixTime { aroundMidnight(12 * 3600).time }

    @Test func aChildWithSessionsOpenSpendsTheTimeBetweenLooks() {
        let start = noon
        var counter = TimeCounter(day: LocalMoment(start).day)
        #expect(counter.advance(to: start, elapsed: 0, open: [1001]) == nil)
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 30), elapsed: 30, open: [1001, 1002])
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 40), elapsed: 10, open: [])
        // Nobody had a session between these two looks.
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 100), elapsed: 60, open: [])
        #expect(counter.seconds(of: 1001) == 40)
        #expect(counter.seconds(of: 1002) == 10)
    }

    @Test func aChildWithSessionsIsOneUIDSoTheTimeIsAddedOnce() throws {
        // The keeper hands the counter the set of uids with a session: two of
        // one child's at once are one uid, so the counter adds the time once.
        // (That two real sessions count once is `TimeKeeperTests`' first test.)
        let sessions: [UInt32] = [1001, 1001, 1001]
        let start = noon
        var counter = TimeCounter(day: LocalMoment(start).day)
        _ = counter.advance(to: start, elapsed: 0, open: Set(sessions))
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 20), elapsed: 20, open: Set(sessions))
        #expect(counter.seconds(of: 1001) == 20)
    }

    @Test func aDayBoundarySplitsTheTime() throws {
        let (after, dayBefore, dayAfter) = aroundMidnight(50)
        #expect(dayBefore != dayAfter)
        var counter = TimeCounter(day: dayBefore, used: [1001: 1000])
        _ = counter.advance(to: UnixTime(seconds: after.seconds - 150), elapsed: 0, open: [1001])
        let advanced = counter.advance(to: after, elapsed: 150, open: [1001])
        let finished = try #require(advanced)
        #expect(finished.day == dayBefore)
        #expect(finished.used == [1001: 1100])
        #expect(counter.day == dayAfter)
        #expect(counter.seconds(of: 1001) == 50)
    }

    @Test func timeTheMachineSleptIsNotCounted() {
        // The monotonic clock stands still in suspend: the wall clock's jump is not time spent.
        let start = noon
        var counter = TimeCounter(day: LocalMoment(start).day)
        _ = counter.advance(to: start, elapsed: 0, open: [1001])
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 5), elapsed: 2, open: [1001])
        #expect(counter.seconds(of: 1001) == 2)
    }

    @Test func aRestartResumesFromTheStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let start = noon
        let day = LocalMoment(start).day
        do {
            let store = try Store.open(directory: directory + "/store", logger: Logger(label: "t", minimumLevel: .error))
            try store.recordTimeUsed([1001: 1234, 1002: 5], on: day, at: .now)
            try store.recordTimeUsed([1001: 1300], on: day, at: .now)
            try store.recordTimeUsed([1001: 99], on: "2000-01-01", at: .now)
        }
        let store = try Store.open(directory: directory + "/store", logger: Logger(label: "t", minimumLevel: .error))
        let used = try store.timeUsed(on: day)
        #expect(used == [1001: 1300, 1002: 5])
        var counter = TimeCounter(day: day, used: used)
        _ = counter.advance(to: start, elapsed: 0, open: [1001])
        _ = counter.advance(to: UnixTime(seconds: start.seconds + 10), elapsed: 10, open: [1001])
        #expect(counter.seconds(of: 1001) == 1310)
        // A smaller count (a Guard that counted from 0) never lowers the day's time.
        try store.recordTimeUsed([1001: 10], on: day, at: .now)
        #expect(try store.timeUsed(on: day)[1001] == 1300)
        // Old days are dropped when asked.
        try store.recordTimeUsed([1001: 1310], on: day, at: .now, keepFrom: "2001-01-01")
        #expect(try store.timeUsed(on: "2000-01-01").isEmpty)
    }
}

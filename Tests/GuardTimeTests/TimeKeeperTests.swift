import Foundation
import GuardIdentity
@testable import GuardSessions
import GuardStore
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// The keeper on its own thread, with sessions and an enforcer the test
/// holds: counting across a restart, the file kept up to date, locking again
/// until more time is given. (`TimeKeeperSessionTests` uses real sessions.)
@Suite(.serialized) struct TimeKeeperTests {
    @Test func twoSessionsAtOnceCountOnceAndARestartResumesFromTheStore() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/" + LoginLimitsFile.name
        let source = TestLimitsSource([try childLimits(uid: 1001, daily: 3600)])
        let sessions = [fakeSession(uid: 1001, leader: 100), fakeSession(uid: 1001, leader: 200)]
        var used = 0
        do {
            let store = try Store.open(directory: directory + "/store", logger: quietLogger)
            let keeper = TimeKeeper()
            try keeper.start(.init(sessions: { sessions }, source: source, enforcer: RecordingEnforcer(),
                                   messenger: RecordingMessenger(), store: store, filePath: file, limits: quickLimits(),
                                   audit: AuditRecorder().append, logger: quietLogger))
            // Counted from the keeper's first look, which a loaded machine may start late.
            #expect(waitFor(seconds: 5) { keeper.looks > 0 })
            let from = ContinuousClock.now
            Thread.sleep(forTimeInterval: 3.2)
            keeper.stop()
            let elapsed = Int((ContinuousClock.now - from).components.seconds)
            let today = try store.timeUsed(on: LocalMoment(.now).day)
            used = try #require(today[1001])
            #expect((3...elapsed + 1).contains(used), "two sessions for \(elapsed) s counted \(used) s")
        }
        // The Guard started again: the day's time goes on from the store.
        let store = try Store.open(directory: directory + "/store", logger: quietLogger)
        let keeper = TimeKeeper()
        try keeper.start(.init(sessions: { [] }, source: source, enforcer: RecordingEnforcer(), messenger: RecordingMessenger(),
                               store: store, filePath: file, limits: quickLimits(), audit: AuditRecorder().append,
                               logger: quietLogger))
        defer { keeper.stop() }
        #expect(waitFor(seconds: 5) { keeper.looks > 0 })
        let line = try #require(limitsLine(of: 1001, at: file))
        #expect(line[2] == LocalMoment(.now).day)
        #expect(Int(line[3]) == used, "\(line)")
        #expect(keeper.usedToday().seconds[1001] == used)
    }

    @Test func aLockedSessionIsLockedAgainUntilMoreTimeIsGivenThenGoesOn() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/" + LoginLimitsFile.name
        let source = TestLimitsSource([try childLimits(uid: 1001, daily: 1)])
        let enforcer = RecordingEnforcer(), audit = AuditRecorder()
        let keeper = TimeKeeper()
        try keeper.start(.init(sessions: { [fakeSession(uid: 1001, leader: 100)] }, source: source, enforcer: enforcer,
                               messenger: RecordingMessenger(), store: try Store.open(directory: directory + "/store", logger: quietLogger),
                               filePath: file, limits: quickLimits(), audit: audit.append, logger: quietLogger))
        defer { keeper.stop() }
        // Locked once the second is spent, and again (every 2 s) while the time is up.
        #expect(waitFor(seconds: 10) { enforcer.asked.get().count >= 3 }, "\(enforcer.asked.get().count) locks")
        let asked = enforcer.asked.get()
        #expect(asked.allSatisfy { $0.0 == .lock && $0.1 == ["pam-100"] })
        let gaps = zip(asked.dropFirst(), asked).map { $0.2.timeIntervalSince($1.2) }
        #expect(gaps.allSatisfy { $0 >= 1.9 }, "locked again after \(gaps) s")
        #expect(audit.outcomes().filter { $0 == "locked" }.count == 1, "\(audit.outcomes())")
        // The file says the time is used up: the next login is refused.
        let line = try #require(limitsLine(of: 1001, at: file))
        #expect(Int(line[3]) ?? 0 >= Int(line[4]) ?? 1)

        // A guardian gives ten minutes: the keeper hears of it, and locks no more.
        source.children.set([try childLimits(uid: 1001, daily: 1, extra: 600)])
        keeper.limitsChanged()
        #expect(waitFor(seconds: 3) { limitsLine(of: 1001, at: file)?[5] == "600" })
        let count = enforcer.asked.get().count
        Thread.sleep(forTimeInterval: 3)
        #expect(enforcer.asked.get().count == count, "locked again after more time was given")
    }

    @Test func theFileIsWrittenAtStartAndWhenTheLimitsChange() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/" + LoginLimitsFile.name
        let source = TestLimitsSource([])
        let keeper = TimeKeeper()
        try keeper.start(.init(sessions: { [] }, source: source, enforcer: RecordingEnforcer(), messenger: RecordingMessenger(),
                               store: try Store.open(directory: directory + "/store", logger: quietLogger), filePath: file,
                               limits: quickLimits(), audit: AuditRecorder().append, logger: quietLogger))
        defer { keeper.stop() }
        #expect(waitFor(seconds: 5) { (try? String(contentsOfFile: file, encoding: .utf8))?.hasPrefix("familycontrols-login-limits 1\n# written") == true })
        #expect(limitsLine(of: 1001, at: file) == nil)
        source.children.set([try childLimits(uid: 1001, daily: nil, hours: "Mon-Sun 00:00-24:00")])
        keeper.limitsChanged()
        #expect(waitFor(seconds: 3) { limitsLine(of: 1001, at: file)?[6] == "0000-2400/0000-2400/0000-2400/0000-2400/0000-2400/0000-2400/0000-2400" })
    }

    /// With no child logged in, nothing is due until a session opens: where
    /// every opening wakes the keeper (the PAM module's, logind's monitor)
    /// it waits for one; where nothing tells it, it looks at its interval.
    @Test func withNoChildLoggedInTheKeeperWaitsForASessionToOpen() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = TestLimitsSource([try childLimits(uid: 1001, daily: 3600)])
        let open = LockedBox<[MonitorSession]>([])
        var limits = quickLimits()
        limits.timeRecordInterval = .seconds(60)
        func started(_ changes: TimeKeeper.SessionChanges, store: String) throws -> TimeKeeper {
            let keeper = TimeKeeper()
            try keeper.start(.init(sessions: { open.get() }, source: source, enforcer: RecordingEnforcer(),
                                   messenger: RecordingMessenger(), store: try Store.open(directory: store, logger: quietLogger),
                                   filePath: directory + "/" + LoginLimitsFile.name, limits: limits,
                                   audit: AuditRecorder().append, logger: quietLogger, sessionChanges: changes))
            #expect(waitFor(seconds: 5) { keeper.looks > 0 })
            return keeper
        }

        let told = try started(.announced, store: directory + "/announced")
        defer { told.stop() }
        let first = told.looks
        Thread.sleep(forTimeInterval: 1.5)
        #expect(told.looks == first, "looked \(told.looks - first) times in 1.5 s with nobody logged in")
        // A session opens: the keeper is told, looks at once, then at its interval while the child is logged in.
        open.update { $0 = [fakeSession(uid: 1001, leader: 100)] }
        told.wake()
        #expect(waitFor(seconds: 2) { told.looks > first })
        let logged = told.looks
        Thread.sleep(forTimeInterval: 1.5)
        #expect(told.looks >= logged + 3, "looked \(told.looks - logged) times in 1.5 s with the child logged in")

        // Unwatched, a session could open unseen: the keeper looks at its interval anyway.
        open.update { $0 = [] }
        let untold = try started(.unwatched, store: directory + "/unwatched")
        defer { untold.stop() }
        let before = untold.looks
        Thread.sleep(forTimeInterval: 1.5)
        #expect(untold.looks >= before + 3, "looked \(untold.looks - before) times in 1.5 s")
    }
}

import Foundation
import GuardIdentity
@testable import GuardSessions
import GuardStore
import GuardTime
import SystemKit
import TestSupport
import Testing
import TimeLimits

/// A warning due as the child logs in meets a session whose desktop has not
/// started yet: it is told again at the keeper's next looks until it reaches
/// somewhere, and for a bounded time only.
@Suite(.serialized) struct WarningToldAgainTests {
    /// Reaches nowhere for the first `misses` tellings, then a desktop.
    final class LateDesktop: SessionMessenger, @unchecked Sendable {
        let misses: Int
        let told = LockedBox<[String]>([])
        init(misses: Int) { self.misses = misses }
        func tell(_ message: String, in sessions: [MonitorSession]) -> [String] {
            let count = told.update { told -> Int in
                told.append(message)
                return told.count
            }
            return count > misses ? ["the desktop of session \(sessions[0].name)"] : []
        }
    }

    private func keep(_ messenger: LateDesktop, toldAgainFor: Duration, in directory: String) throws -> (TimeKeeper, AuditRecorder) {
        // A 60 s allowance and a warning 100 s before the end: due at the first look.
        let source = TestLimitsSource([try childLimits(uid: 1001, daily: 60)])
        var limits = quickLimits(warnings: [100])
        limits.timeWarningToldAgainFor = toldAgainFor
        let audit = AuditRecorder(), keeper = TimeKeeper()
        try keeper.start(.init(sessions: { [fakeSession(uid: 1001, leader: 100)] }, source: source,
                               enforcer: RecordingEnforcer(), messenger: messenger,
                               store: try Store.open(directory: directory + "/store", logger: quietLogger),
                               filePath: directory + "/" + LoginLimitsFile.name, limits: limits, audit: audit.append,
                               logger: quietLogger))
        return (keeper, audit)
    }

    @Test func aWarningThatReachedNowhereIsToldAgainUntilADesktopShowsIt() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let messenger = LateDesktop(misses: 2)
        let (keeper, audit) = try keep(messenger, toldAgainFor: .seconds(60), in: directory)
        defer { keeper.stop() }

        #expect(waitFor(seconds: 10) { audit.outcomes().count == 2 }, "\(audit.rows.get())")
        let rows = audit.rows.get()
        #expect(rows.map(\.0) == ["warned", "warned"], "\(rows)")
        #expect(rows.first?.2.hasSuffix("told on no terminal") == true, "\(rows)")
        #expect(rows.last?.2.contains("told on the desktop of session pam-100, which the first warning did not reach") == true,
                "\(rows)")
        // Told with the time then left, and no more once it reached the desktop.
        #expect(messenger.told.get().allSatisfy { $0.contains("left: then your screen will lock") }, "\(messenger.told.get())")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(messenger.told.get().count == 3, "\(messenger.told.get())")
        #expect(audit.outcomes().count == 2, "\(audit.rows.get())")
    }

    @Test func aWarningThatNeverReachesAnythingIsToldAgainOnlyForAWhile() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let messenger = LateDesktop(misses: .max)
        let (keeper, audit) = try keep(messenger, toldAgainFor: .seconds(1), in: directory)
        defer { keeper.stop() }

        // Looks every 250 ms: told at the first, then for about a second more.
        #expect(waitFor(seconds: 10) { messenger.told.get().count >= 3 }, "\(messenger.told.get())")
        Thread.sleep(forTimeInterval: 2)
        let settled = messenger.told.get().count
        Thread.sleep(forTimeInterval: 1.5)
        #expect(messenger.told.get().count == settled, "still told after the bound: \(messenger.told.get().count)")
        #expect(audit.outcomes() == ["warned"], "\(audit.rows.get())")
    }
}

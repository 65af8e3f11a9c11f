import GuardIdentity
import GuardTime
import SystemKit
import Testing
import TimeLimits

/// The decisions: when a child is warned, when their sessions are locked or
/// ended, and that a session unlocked while the time is up is locked again.
@Suite struct TimeRulesTests {
    private let rules = TimeRules(limits: GuardLimits())
    private let day = "2026-12-07"
    /// Monday 12:00.
    private var noon: LocalMoment { LocalMoment(weekday: 0, minute: 720, day: day) }

    private func child(daily: Int? = 3600, hours: String? = nil, atEnd: TimeUpAction = .lock, extra: Int = 0) throws -> ChildTimeLimits {
        ChildTimeLimits(uid: 1001, user: "alice",
                        limits: TimeLimits(hours: try hours.map { try LoginHours(parsing: $0) },
                                           daily: daily.map { SessionDuration(seconds: $0) }, atEnd: atEnd),
                        appNames: ["Demo"], day: day, extraSeconds: extra)
    }

    @Test func aChildIsWarnedFiveMinutesAndOneMinuteBeforeTheEndOnceEach() throws {
        let limits = try child()
        var state = TimeRules.State()
        var warnings: [Int] = []
        for used in [3000, 3290, 3300, 3350, 3539, 3540, 3541, 3590] {
            let (actions, left) = rules.decide(limits, used: used, moment: noon, now: .now, clock: .now, hasSessions: true, state: &state)
            #expect(left == 3600 - used)
            for case .warn(let secondsLeft) in actions { warnings.append(secondsLeft) }
        }
        #expect(warnings == [300, 60])
    }

    @Test func moreTimeGivenWarnsAgainBeforeTheNewEnd() throws {
        var state = TimeRules.State()
        _ = rules.decide(try child(), used: 3550, moment: noon, now: .now, clock: .now, hasSessions: true, state: &state)
        let (none, _) = rules.decide(try child(extra: 1200), used: 3560, moment: noon, now: .now, clock: .now,
                                     hasSessions: true, state: &state)
        #expect(none.isEmpty)
        let (again, _) = rules.decide(try child(extra: 1200), used: 4500, moment: noon, now: .now, clock: .now,
                                      hasSessions: true, state: &state)
        #expect(again == [.warn(secondsLeft: 300)])
    }

    @Test func theSessionsEndWhenTheHoursEndEvenWithTimeLeft() throws {
        let limits = try child(daily: nil, hours: "Mon-Sun 08:00-12:30", atEnd: .end)
        var state = TimeRules.State()
        let before = LocalMoment(weekday: 0, minute: 12 * 60 + 29, second: 30, day: day)
        let (warned, left) = rules.decide(limits, used: 0, moment: before, now: .now, clock: .now, hasSessions: true, state: &state)
        #expect(left == 30)
        #expect(warned == [.warn(secondsLeft: 30)])
        let at = LocalMoment(weekday: 0, minute: 12 * 60 + 30, day: day)
        let (actions, _) = rules.decide(limits, used: 0, moment: at, now: .now, clock: .now, hasSessions: true, state: &state)
        guard case .enforce(let consequence, let reason, let first)? = actions.first else {
            Issue.record("nothing done at the hours' end: \(actions)")
            return
        }
        #expect(consequence == .end && first)
        #expect(reason.contains("outside the hours") && reason.contains("Demo"))
    }

    @Test func aSessionUnlockedWhileTheTimeIsUpIsLockedAgainAtABoundedRate() throws {
        let limits = try child()
        var state = TimeRules.State()
        let start = MonotonicInstant.now
        func decide(after seconds: Int, extra: Int = 0) throws -> [TimeRules.Action] {
            rules.decide(try child(extra: extra), used: 3600, moment: noon, now: .now, clock: start.advanced(by: .seconds(seconds)),
                         hasSessions: true, state: &state).actions
        }
        _ = limits
        let first = try decide(after: 0)
        #expect(first.count == 1)
        if case .enforce(.lock, _, true)? = first.first {} else { Issue.record("not locked: \(first)") }
        #expect(try decide(after: 3).isEmpty, "locked again before the bound")
        let again = try decide(after: 10)
        if case .enforce(.lock, _, false)? = again.first {} else { Issue.record("not locked again: \(again)") }
        // More time given: nothing more is done, and the next end is a first one again.
        #expect(try decide(after: 11, extra: 600).isEmpty)
        let later = rules.decide(try child(extra: 600), used: 4200, moment: noon, now: .now, clock: start.advanced(by: .seconds(12)),
                                 hasSessions: true, state: &state).actions
        if case .enforce(.lock, _, true)? = later.first {} else { Issue.record("not locked at the new end: \(later)") }
    }

    @Test func nothingIsDoneForAChildWithoutASession() throws {
        var state = TimeRules.State()
        let (actions, left) = rules.decide(try child(), used: 4000, moment: noon, now: .now, clock: .now, hasSessions: false, state: &state)
        #expect(actions.isEmpty && left == 0)
    }

    @Test func aWarningDueBeforeAnySessionOpensIsGivenOnceOneDoes() throws {
        var state = TimeRules.State()
        // Limits set with little time left while the child is not logged in: no one to warn yet.
        let before = rules.decide(try child(), used: 3580, moment: noon, now: .now, clock: .now, hasSessions: false, state: &state)
        #expect(before.actions.isEmpty)
        let after = rules.decide(try child(), used: 3580, moment: noon, now: .now, clock: .now, hasSessions: true, state: &state)
        if case .warn? = after.actions.first {} else { Issue.record("no warning once a session opened: \(after.actions)") }
    }

    @Test func loginsAllowedOutsideTheHoursLastUntilOpenUntil() throws {
        var limits = try child(daily: nil, hours: "Mon-Sun 08:00-09:00")
        let now = UnixTime.now
        limits.openUntil = now.seconds + 120
        var state = TimeRules.State()
        let (actions, left) = rules.decide(limits, used: 0, moment: noon, now: now, clock: .now, hasSessions: true, state: &state)
        #expect(left == 120)
        #expect(actions == [.warn(secondsLeft: 120)])
    }
}

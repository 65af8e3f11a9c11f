import Foundation
import GuardIdentity
@testable import GuardSessions
import GuardTime
import SystemKit
import Testing

/// Monitors and time limits ask one place what a session bears.
@Suite struct SessionRulesTests {
    @Test func twoRulesAtOnceCostASessionOnceAndAnEndAlwaysFollowsALock() {
        let enforcer = RecordingEnforcer()
        var limits = GuardLimits()
        limits.sessionEndGrace = .seconds(1)
        let rules = SessionRules(enforcer: enforcer, limits: limits)
        let first = fakeSession(uid: 1001, leader: 100), second = fakeSession(uid: 1001, leader: 200)
        // A required monitor kept down locks the session; the time, up at the same moment, asks the same.
        rules.enforce(.lock, on: [first], reason: "the required monitor of org.example.App was kept down")
        rules.enforce(.lock, on: [first, second], reason: "time is up for alice")
        // The time's rule ends them: an end is never held back by a lock.
        rules.enforce(.end, on: [first, second], reason: "time is up for alice")
        rules.enforce(.lock, on: [first], reason: "the required monitor of org.example.App was kept down")
        let asked = enforcer.asked.get().map { "\($0.0) \($0.1.joined(separator: ","))" }
        #expect(asked == ["lock pam-100", "lock pam-200", "end pam-100,pam-200"], "\(asked)")
        // After the grace period, a rule that still holds asks again.
        Thread.sleep(forTimeInterval: 1.1)
        rules.enforce(.lock, on: [first], reason: "time is up for alice")
        #expect(enforcer.asked.get().last.map { "\($0.0) \($0.1.joined(separator: ","))" } == "lock pam-100")
    }
}

import FamilyControlsModel
import GuardPolicy
import GuardStore
import GuardTimeLimits
import SystemKit
import Testing
import Synchronization
import TimeLimits

/// The rules of the limits in force, over a real store: several apps'
/// limits combine, only apps still approved count, a damaged row is left out
/// and reported (never trusted, never a crash), and an ended approval takes
/// its app's limits with it, audited.
@Suite struct ChildLimitsPolicyTests {
    private func approve(_ policy: AuthorizationPolicy, _ appID: String, status: AuthorizationStatus = .approved) throws {
        try policy.ledger.store.save(AuthorizationRecord(
            user: Accounts.child, uid: 1, appID: appID, member: .child, status: status, approvedBy: Accounts.guardian,
            updatedAt: .now, appPath: "/apps/\(appID)", displayName: "App \(appID)"))
    }

    private func setLimits(_ policy: AuthorizationPolicy, _ appID: String, hours: String?, daily: Int?) throws {
        try policy.ledger.store.saveTimeLimits(
            TimeLimitsRecord(user: Accounts.child, uid: 1, appID: appID, hours: hours, dailySeconds: daily, atEnd: "lock",
                             setBy: Accounts.child),
            audit: AuditEvent(at: .now, actor: Accounts.child, action: .limits, user: Accounts.child, appID: appID, member: .child,
                              outcome: .applied))
    }

    @Test func severalAppsLimitsCombineAndADamagedRowIsLeftOutNotTrusted() throws {
        try withPolicy { fixture in
            let policy = fixture.policy
            for app in ["org.example.A", "org.example.B", "org.example.Damaged", "org.example.Denied"] {
                try approve(policy, app, status: app == "org.example.Denied" ? .denied : .approved)
            }
            try setLimits(policy, "org.example.A", hours: "Mon-Sun 08:00-20:00", daily: 7200)
            try setLimits(policy, "org.example.B", hours: "Mon-Sun 10:00-22:00", daily: 3600)
            try setLimits(policy, "org.example.Damaged", hours: "every day, all day", daily: 60)
            try setLimits(policy, "org.example.Denied", hours: "none", daily: 0)
            let limits = ChildLimitsPolicy(policy: policy)
            let inForce = try #require(try limits.inForce().first)
            #expect(inForce.limits.hours == (try LoginHours(parsing: "Mon-Sun 10:00-20:00")))
            #expect(inForce.limits.daily?.seconds == 3600)
            #expect(inForce.appNames == ["App org.example.A", "App org.example.B"])
        }
    }

    @Test func anEndedApprovalTakesItsAppsLimitsWithItAudited() throws {
        try withPolicy { fixture in
            let policy = fixture.policy
            try approve(policy, "org.example.A")
            let limits = ChildLimitsPolicy(policy: policy)
            let told = Mutex(0)
            limits.whenChanged { told.withLock { $0 += 1 } }
            try setLimits(policy, "org.example.A", hours: nil, daily: 1800)
            #expect(try limits.inForce().count == 1)
            try policy.revoke(user: Accounts.child, appID: "org.example.A", requester: try Accounts.account("root"),
                              proof: GuardianProof(session: nil, channel: nil))
            #expect(try limits.inForce().isEmpty)
            #expect(try policy.ledger.store.timeLimits().isEmpty)
            #expect(told.withLock { $0 } == 1)
            let removed = try policy.ledger.store.auditEvents(appID: "org.example.A", limit: 100).filter { $0.action == .limits }
            #expect(removed.last?.outcome == .removed)
            #expect(removed.last?.actor == AuditEvent.guardActor)
        }
    }
}

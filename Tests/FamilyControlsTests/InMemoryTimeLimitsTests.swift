import FamilyControls
import FamilyControlsTesting
import Foundation
import Testing

/// The login limits (Linux only) through the in-memory Guard, by the system
/// Guard's rules: who may set them, what takes effect at once, and what a
/// parent or guardian decides at the sheet.
@Suite struct InMemoryTimeLimitsTests {
    @Test func onlyAnAppApprovedForAChildMaySetReadOrAskForTime() async {
        for familyGuard in [InMemoryGuard(), InMemoryGuard(user: .individual, status: .approved),
                            InMemoryGuard(user: .child, status: .denied)] {
            let store = familyGuard.timeLimitsStore
            await #expect(throws: FamilyControlsError.restricted) {
                try await store.apply(LoginLimits(dailyAllowance: .seconds(3600)))
            }
            #expect(familyGuard.center.lastErrorMessage?.contains("only an app approved for") == true,
                    "\(familyGuard.center.lastErrorMessage ?? "")")
            await #expect(throws: FamilyControlsError.restricted) { try await store.current() }
            await #expect(throws: FamilyControlsError.restricted) { try await store.requestMoreTime(minutes: 10) }
            #expect(familyGuard.timeLimits == nil)
        }
    }

    @Test func stricterLimitsTakeEffectAtOnceAndLooserOnesWaitForAGuardian() async throws {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        let store = familyGuard.timeLimitsStore
        let twoHours = LoginLimits(hours: "Mon-Fri 07:30-20:00", dailyAllowance: .seconds(7200))
        #expect(try await store.apply(twoHours) == .applied)
        let oneHour = LoginLimits(hours: "Mon-Fri 08:00-19:00", dailyAllowance: .seconds(3600), atEnd: .end)
        #expect(try await store.apply(oneHour) == .applied)
        #expect(familyGuard.timeLimits == oneHour)

        // Looser: the call waits until a parent or guardian decides.
        let looser = LoginLimits(hours: "Mon-Fri 08:00-19:00", dailyAllowance: .seconds(10_800), atEnd: .end)
        let asking = Task { try await store.apply(looser) }
        let sheet = try await familyGuard.nextSheet()
        #expect(sheet.purpose == .timeLimits(looser))
        #expect(familyGuard.timeLimits == oneHour, "looser limits took effect before anyone decided")
        sheet.answer(.approve)
        #expect(try await asking.value == .approvedByGuardian)
        #expect(familyGuard.timeLimits == looser)

        // A no leaves the limits in force; so does a sheet nobody answers.
        familyGuard.willAnswer(.deny, .cancel)
        for _ in 0..<2 {
            await #expect(throws: FamilyControlsError.authorizationCanceled) {
                try await store.apply(LoginLimits(dailyAllowance: .seconds(14_400)))
            }
        }
        #expect(familyGuard.timeLimits == looser)
        // Lifting them is looser still.
        familyGuard.willAnswer(.approve)
        #expect(try await store.apply(LoginLimits()) == .approvedByGuardian)
        #expect(familyGuard.timeLimits == nil)
        #expect(try await store.current() == nil)
    }

    @Test func limitsThatDoNotReadAreRefusedAndChangeNothing() async throws {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        let store = familyGuard.timeLimitsStore
        for wrong in [LoginLimits(hours: "Mon-Fri 25:00-26:00"), LoginLimits(hours: "every day"),
                      LoginLimits(dailyAllowance: .seconds(200_000))] {
            await #expect(throws: FamilyControlsError.invalidArgument) { try await store.apply(wrong) }
        }
        #expect(familyGuard.timeLimits == nil)
    }

    @Test func moreTimeIsAGuardiansDecisionAndCountsInTheTimeLeft() async throws {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        let store = familyGuard.timeLimitsStore
        await #expect(throws: FamilyControlsError.invalidArgument) { try await store.requestMoreTime(minutes: 10) }
        #expect(familyGuard.center.lastErrorMessage?.contains("no time limits in force") == true)

        #expect(try await store.apply(LoginLimits(dailyAllowance: .seconds(3600))) == .applied)
        familyGuard.timeUsedToday = .seconds(3000)
        var current = try #require(try await store.current())
        #expect(current.dailyAllowance == .seconds(3600))
        #expect(current.timeLeft == .seconds(600))
        #expect(current.setBy.count == 1)

        for minutes in [0, -5, 1441] {
            await #expect(throws: FamilyControlsError.invalidArgument) { try await store.requestMoreTime(minutes: minutes) }
        }
        let asking = Task { try await store.requestMoreTime(minutes: 20, reason: "homework") }
        let sheet = try await familyGuard.nextSheet()
        #expect(sheet.purpose == .moreTime(minutes: 20, reason: "homework"))
        sheet.answer(.approve)
        #expect(try await asking.value == .seconds(1200))
        current = try #require(try await store.current())
        #expect(current.moreTimeToday == .seconds(1200))
        #expect(current.timeLeft == .seconds(1800))

        familyGuard.willAnswer(.deny)
        await #expect(throws: FamilyControlsError.authorizationCanceled) { try await store.requestMoreTime(minutes: 5) }
        #expect(familyGuard.center.lastErrorMessage?.contains("no more time was given") == true)
        #expect(try await store.current()?.moreTimeToday == .seconds(1200))
    }

    @Test func aGuardThatIsNotRunningIsUnavailable() async {
        let familyGuard = InMemoryGuard(user: .child, status: .approved)
        familyGuard.isRunning = false
        await #expect(throws: FamilyControlsError.unavailable) {
            try await familyGuard.timeLimitsStore.apply(LoginLimits(dailyAllowance: .seconds(3600)))
        }
    }

    /// An app that uses the store as it ships (`TimeLimitsStore()`, on the
    /// shared center) reaches the in-memory Guard in its tests, never the
    /// machine's.
    @Test func theSharedStoreTalksToTheInMemoryGuardForTheLengthOfATest() async throws {
        try await InMemoryGuard.withSharedCenter(user: .child, status: .approved) { familyGuard throws in
            let outcome = try await TimeLimitsStore().apply(LoginLimits(dailyAllowance: .seconds(5400)))
            #expect(outcome == .applied)
            #expect(familyGuard.timeLimits == LoginLimits(dailyAllowance: .seconds(5400)))
        }
    }
}

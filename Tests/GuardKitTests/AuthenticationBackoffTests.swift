import SystemKit
import GuardKit
import Testing
import GuardPolicy

@Suite("Failed authentications in a row slow the next attempt")
struct AuthenticationBackoffTests {
    let start = MonotonicInstant.now

    @Test func theFirstFailuresAreFree() {
        let backoff = AuthenticationBackoff()
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start) == nil)
        backoff.recordFailure(of: "kid", now: start)
        backoff.recordFailure(of: "kid", now: start)
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start) == nil)
        #expect(backoff.recordFailure(of: "kid", now: start) == 3)
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start) == .seconds(30))
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start + .seconds(10)) == .seconds(20))
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start + .seconds(30)) == nil)
    }

    @Test func eachFurtherFailureDoublesTheWaitUpToALimit() {
        let backoff = AuthenticationBackoff()
        var waits: [Duration?] = []
        for failure in 1...9 {
            let at = start + .seconds(failure)
            backoff.recordFailure(of: "kid", now: at)
            waits.append(backoff.remainingWait(for: "kid", freeFailures: 1, delay: .seconds(10), now: at))
        }
        let limit = Duration.seconds(10) * (1 << AuthenticationBackoff.maximumDoublings)
        #expect(waits == [.seconds(10), .seconds(20), .seconds(40), .seconds(80), .seconds(160), limit, limit, limit, limit])
    }

    @Test func aCorrectPasswordClearsTheCountForThatUserOnly() {
        let backoff = AuthenticationBackoff()
        for _ in 0..<4 {
            backoff.recordFailure(of: "kid", now: start)
            backoff.recordFailure(of: "sibling", now: start)
        }
        backoff.recordSuccess(of: "kid")
        #expect(backoff.failures(of: "kid") == 0)
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .seconds(30), now: start) == nil)
        #expect(backoff.failures(of: "sibling") == 4)
        #expect(backoff.remainingWait(for: "sibling", freeFailures: 3, delay: .seconds(30), now: start) == .seconds(60))
    }

    @Test func aZeroDelayTurnsItOff() {
        let backoff = AuthenticationBackoff()
        for _ in 0..<20 { backoff.recordFailure(of: "kid", now: start) }
        #expect(backoff.remainingWait(for: "kid", freeFailures: 3, delay: .zero, now: start) == nil)
    }

    @Test(arguments: [(Duration.seconds(1), "1 second"), (.milliseconds(1), "1 second"), (.milliseconds(30_500), "31 seconds"),
                      (.seconds(60), "60 seconds")])
    func waitsAreSpokenInWholeSecondsRoundedUp(wait: Duration, spoken: String) {
        #expect(wait.spokenSeconds == spoken)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite struct MonotonicInstantTests {
    @Test func itReadsTheClockContinuousClockReads() {
        // ContinuousClock's instant is opaque; its distance from a fixed
        // instant is not. Both clocks measure the same 50 ms.
        let ours = MonotonicInstant.now, theirs = ContinuousClock.now
        usleep(50_000)
        let oursElapsed = ours.duration(to: .now), theirsElapsed = theirs.duration(to: .now)
        #expect(oursElapsed >= .milliseconds(50))
        let difference = oursElapsed - theirsElapsed
        #expect(difference < .milliseconds(20) && difference > .milliseconds(-20), "\(oursElapsed) vs \(theirsElapsed)")
        var boot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        let bootNanoseconds = Int64(boot.tv_sec) * 1_000_000_000 + Int64(boot.tv_nsec)
        #expect(abs(bootNanoseconds - MonotonicInstant.now.nanoseconds) < 1_000_000_000)
    }

    @Test func arithmeticAndOrder() {
        let start = MonotonicInstant(nanoseconds: 1_000)
        #expect(start + .seconds(2) == MonotonicInstant(nanoseconds: 2_000_001_000))
        #expect(start - .nanoseconds(400) == MonotonicInstant(nanoseconds: 600))
        #expect(start.advanced(by: .milliseconds(1)).duration(to: start) == .milliseconds(-1))
        #expect((start + .seconds(3)) - start == .seconds(3))
        #expect(start < start + .nanoseconds(1))
        #expect(!(start < start))
        // Sub-nanosecond parts are dropped, not rounded up.
        #expect(start + .nanoseconds(1) / 2 == start)
    }

    @Test func farDeadlinesSaturateInsteadOfTrapping() {
        let now = MonotonicInstant.now
        #expect(now + .seconds(Int64.max) == MonotonicInstant(nanoseconds: .max))
        #expect(now - .seconds(Int64.max) == MonotonicInstant(nanoseconds: .min))
        #expect(MonotonicInstant(nanoseconds: .max - 1) + .nanoseconds(5) == MonotonicInstant(nanoseconds: .max))
        #expect(now < now + .seconds(Int64.max))
        // The distance to a saturated instant is exact, not wrapped around.
        #expect(now.duration(to: now - .seconds(Int64.max)) < .zero)
        #expect(MonotonicInstant(nanoseconds: .min).duration(to: MonotonicInstant(nanoseconds: .max))
                == .nanoseconds(Int64.max) + .nanoseconds(Int64.max) + .nanoseconds(1))
    }
}

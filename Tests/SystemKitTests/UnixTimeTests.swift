import SystemKit
import Testing

@Suite struct UnixTimeTests {
    @Test("ISO 8601 in UTC, the second a moment falls in", arguments: [
        (0.0, "1970-01-01T00:00:00Z"), (900, "1970-01-01T00:15:00Z"), (1_764_547_200.9, "2025-12-01T00:00:00Z"),
        (951_825_599, "2000-02-29T11:59:59Z"), (-0.5, "1969-12-31T23:59:59Z"),
    ])
    func iso8601(_ seconds: Double, _ text: String) {
        #expect(UnixTime(seconds: seconds).iso8601 == text)
    }

    @Test func addingADurationAndComparing() {
        let start = UnixTime(seconds: 100)
        #expect(start.adding(.milliseconds(1500)) == UnixTime(seconds: 101.5))
        #expect(start.adding(.seconds(-100)) == UnixTime(seconds: 0))
        #expect(start < start.adding(.nanoseconds(1)))
        let now = UnixTime.now
        #expect(now.seconds > 1_700_000_000, "the wall clock, not a monotonic one")
    }
}

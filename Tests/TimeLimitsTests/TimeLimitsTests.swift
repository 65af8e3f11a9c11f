import Testing
import TimeLimits

/// Login hours and daily time as a person writes them, and the verdicts the
/// Guard and the PAM module reach from them.
struct LoginHoursTests {
    @Test func theIssuesExampleReadsAsTwoGroupsAndWritesTheStateField() throws {
        let hours = try LoginHours(parsing: "Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00")
        #expect(hours.description == "Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00")
        #expect(hours.stateField == "0730-2000/0730-2000/0730-2000/0730-2000/0730-2000/0900-2100/0900-2100")
        #expect(hours.allows(weekday: 0, minute: 7 * 60 + 30))
        #expect(!hours.allows(weekday: 0, minute: 20 * 60), "the end is not in the range")
        #expect(!hours.allows(weekday: 5, minute: 8 * 60 + 59))
    }

    @Test func aWeekdayNamedInNoGroupHasNoHoursAndASpanWrapsOverTheWeekend() throws {
        let hours = try LoginHours(parsing: "Fri-Mon 10:00-12:00 14:00-16:00")
        #expect(hours.stateField == "1000-1200,1400-1600/none/none/none/1000-1200,1400-1600/1000-1200,1400-1600/1000-1200,1400-1600")
        #expect(hours.description == "Mon 10:00-12:00 14:00-16:00,Fri-Sun 10:00-12:00 14:00-16:00")
        #expect(try LoginHours(parsing: hours.description) == hours, "what it writes reads back the same")
        #expect(try LoginHours(parsing: "none").description == "none")
    }

    @Test(arguments: ["", "Mon", "Mon 7:30-20:00", "Mon 07:30", "Mon 20:00-07:30", "Mon 24:00-24:00", "Mon 07:60-08:00",
                      "Funday 09:00-10:00", "Mon-Tue-Wed 09:00-10:00", "Mon 09:00-10:00,", "Mon 09:00-25:00", "Mon ０9:00-10:00"])
    func hoursThatCannotBeReadAreRefusedSayingWhy(text: String) {
        #expect(throws: TimeLimitsError.self) { try LoginHours(parsing: text) }
    }

    /// The login-limits file holds at most 32 ranges a day (the PAM module
    /// reads a longer day as damaged, and the line's bound): more are refused
    /// as written, and two apps' hours combined into more keep the first 32.
    @Test func aDayHoldsAtMost32RangesAsWrittenAndInTheFile() throws {
        func ranges(_ count: Int, from first: Int) -> String {
            (0..<count).map { LoginHours.clock(first + $0 * 4) + "-" + LoginHours.clock(first + $0 * 4 + 1) }.joined(separator: " ")
        }
        #expect(throws: TimeLimitsError.self) { try LoginHours(parsing: "Mon-Sun " + ranges(33, from: 0)) }
        let allowed = try LoginHours(parsing: "Mon-Sun " + ranges(32, from: 0))
        #expect(allowed.days[0].count == 32)
        // Two apps' hours combined can make more (built here as the combination builds them).
        var many = Array(repeating: [LoginHours.Range](), count: 7)
        many[0] = (0..<40).map { LoginHours.Range(start: $0 * 4, end: $0 * 4 + 1) }
        let combined = LoginHours(days: many)
        let monday = combined.stateField.split(separator: "/")[0]
        #expect(monday.split(separator: ",").count == 32, "\(monday)")
        #expect(monday.hasPrefix("0000-0001,"), "the first ranges are kept")
    }

    @Test func overlappingRangesMergeAndIntersectionIsWhatBothAllow() throws {
        let wide = try LoginHours(parsing: "Mon-Sun 08:00-12:00 11:00-20:00")
        #expect(wide.description == "Mon-Sun 08:00-20:00")
        let narrow = try LoginHours(parsing: "Mon-Fri 09:00-17:00")
        #expect(wide.intersection(narrow) == narrow)
        #expect(narrow.isWithin(wide))
        #expect(!wide.isWithin(narrow))
    }

    @Test func minutesLeftRunOnOverMidnightAndTheNextStartIsFound() throws {
        let hours = try LoginHours(parsing: "Fri 20:00-24:00,Sat 00:00-01:00,Mon 07:00-08:00")
        #expect(hours.minutesLeft(weekday: 4, minute: 23 * 60) == 120)
        #expect(hours.minutesLeft(weekday: 4, minute: 19 * 60) == nil)
        #expect(hours.nextStart(weekday: 4, minute: 19 * 60)! == (0, 20 * 60))
        #expect(hours.nextStart(weekday: 5, minute: 2 * 60)! == (2, 7 * 60), "Saturday 02:00: Monday 07:00")
        #expect(LoginHours(days: Array(repeating: [], count: 7)).nextStart(weekday: 0, minute: 0) == nil)
    }
}

struct SessionDurationTests {
    @Test(arguments: [("90m", 5400), ("2h", 7200), ("1h30m", 5400), ("45s", 45), ("0m", 0), ("24h", 86_400), ("1h1m1s", 3661)])
    func lengthsReadAsWritten(text: String, seconds: Int) throws {
        #expect(try SessionDuration(parsing: text).seconds == seconds)
    }

    @Test(arguments: ["", "90", "m", "1m1h", "1h1h", "25h", "-5m", "1.5h", "99999999999h", "1 h"])
    func lengthsThatCannotBeReadAreRefused(text: String) {
        #expect(throws: TimeLimitsError.self) { try SessionDuration(parsing: text) }
    }

    @Test func aLengthWritesTheShortestTextAndSpeaksInWords() throws {
        #expect(SessionDuration(seconds: 5400).description == "1h30m")
        #expect(SessionDuration(seconds: 5400).spoken == "1 h 30 min")
        #expect(SessionDuration(seconds: 30).description == "30s")
    }
}

struct TimeLimitsRulesTests {
    private let weekdays = try! LoginHours(parsing: "Mon-Fri 07:30-20:00")

    @Test func fewerHoursLessTimeAndEndingAreStricterAndTheirOppositesAreNot() throws {
        let current = TimeLimits(hours: weekdays, daily: SessionDuration(seconds: 3600), atEnd: .lock)
        #expect(TimeLimits(hours: try LoginHours(parsing: "Mon-Fri 08:00-19:00"), daily: SessionDuration(seconds: 1800), atEnd: .end)
            .isAtLeastAsStrict(as: current))
        #expect(current.isAtLeastAsStrict(as: current))
        #expect(!TimeLimits(hours: try LoginHours(parsing: "Mon-Sun 07:30-20:00"), daily: SessionDuration(seconds: 3600))
            .isAtLeastAsStrict(as: current), "more hours")
        #expect(!TimeLimits(hours: weekdays, daily: SessionDuration(seconds: 3601)).isAtLeastAsStrict(as: current), "more time")
        #expect(!TimeLimits(hours: nil, daily: SessionDuration(seconds: 3600)).isAtLeastAsStrict(as: current), "hours lifted")
        #expect(!TimeLimits(hours: weekdays, daily: nil).isAtLeastAsStrict(as: current), "daily time lifted")
        let ending = TimeLimits(hours: weekdays, daily: SessionDuration(seconds: 3600), atEnd: .end)
        #expect(!current.isAtLeastAsStrict(as: ending), "locking only, where sessions ended")
        #expect(current.isAtLeastAsStrict(as: nil), "limits where there were none")
    }

    @Test func twoAppsLimitsCombineToTheStricterOfEach() throws {
        let a = TimeLimits(hours: weekdays, daily: SessionDuration(seconds: 7200), atEnd: .lock)
        let b = TimeLimits(hours: try LoginHours(parsing: "Mon-Sun 09:00-22:00"), daily: SessionDuration(seconds: 3600), atEnd: .end)
        let both = try #require(TimeLimits.combined([a, b]))
        #expect(both.hours?.description == "Mon-Fri 09:00-20:00")
        #expect(both.daily?.seconds == 3600)
        #expect(both.atEnd == .end)
        #expect(TimeLimits.combined([]) == nil)
    }

    @Test func theVerdictTakesTheEarlierOfTheHoursEndAndTheDaysTime() throws {
        let limits = TimeLimits(hours: weekdays, daily: SessionDuration(seconds: 3600))
        let monday = LocalMoment(weekday: 0, minute: 19 * 60 + 30, second: 0, day: "2026-12-07")
        #expect(limits.verdict(at: monday, used: 0, extra: 0) == .allowed(secondsLeft: 1800), "the hours end first")
        #expect(limits.verdict(at: monday, used: 3000, extra: 0) == .allowed(secondsLeft: 600), "the time ends first")
        #expect(limits.verdict(at: monday, used: 3600, extra: 0) == .timeUsedUp(tomorrowAt: 7 * 60 + 30))
        #expect(limits.verdict(at: monday, used: 3600, extra: 300) == .allowed(secondsLeft: 300), "more time given")
        let friday = LocalMoment(weekday: 4, minute: 21 * 60, day: "2026-12-11")
        #expect(limits.verdict(at: friday, used: 0, extra: 0) == .outsideHours(next: (3, 7 * 60 + 30)))
        #expect(limits.verdict(at: friday, used: 0, extra: 0, openSeconds: 900) == .allowed(secondsLeft: 900),
                "a guardian opened the hours for 15 minutes")
        #expect(TimeLimits().verdict(at: friday, used: 99_999, extra: 0) == .allowed(secondsLeft: nil))
    }
}

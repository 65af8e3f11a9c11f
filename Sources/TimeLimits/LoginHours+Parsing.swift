extension LoginHours {
    /// Reads hours as a person writes them: groups joined by `,`, each one
    /// weekday or a span of them (`Mon`, `Mon-Fri`, `Sat-Sun`, `Fri-Mon`
    /// wrapping over the weekend) and one or more `HH:MM-HH:MM` ranges
    /// separated by spaces (`24:00` ends a day; a range cannot cross
    /// midnight: write `Fri 20:00-24:00,Sat 00:00-01:00`). A weekday named
    /// twice gets both groups' hours; one named in no group gets none.
    /// `none` alone: no hours at all.
    /// - Throws: ``TimeLimitsError`` saying which part is wrong.
    public init(parsing text: String) throws(TimeLimitsError) {
        let trimmed = TimeLimitsError.trimmed(text)
        guard trimmed.utf8.count <= 1024 else { throw TimeLimitsError("hours are at most 1024 characters long") }
        guard !trimmed.isEmpty else { throw TimeLimitsError("no hours given (write them like \"Mon-Fri 07:30-20:00,Sat-Sun 09:00-21:00\")") }
        var days: [[Range]] = Array(repeating: [], count: 7)
        if trimmed == "none" {
            self.init(days: days)
            return
        }
        for group in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
            let words = group.split(separator: " ").map(String.init)
            guard let first = words.first else { throw TimeLimitsError("an empty group in \"\(trimmed)\"") }
            let weekdays = try Self.weekdays(first)
            guard words.count > 1 else { throw TimeLimitsError("\"\(first)\" has no hours (like \(first) 09:00-17:00)") }
            for word in words.dropFirst() {
                let range = try Self.range(word)
                for day in weekdays { days[day].append(range) }
            }
        }
        self.init(days: days)
        if let busy = self.days.firstIndex(where: { $0.count > Self.mostRangesADay }) {
            throw TimeLimitsError("\(Self.weekdayNames[busy]) has \(self.days[busy].count) ranges of hours; "
                + "a day has at most \(Self.mostRangesADay)")
        }
    }

    private static func weekdays(_ word: String) throws(TimeLimitsError) -> [Int] {
        let ends = word.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard ends.count <= 2 else { throw TimeLimitsError("\"\(word)\" is not a weekday or a span of weekdays like Mon-Fri") }
        var indices: [Int] = []
        for end in ends {
            guard let index = weekdayNames.firstIndex(where: { $0.lowercased() == end.lowercased() }) else {
                throw TimeLimitsError("\"\(end)\" is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")
            }
            indices.append(index)
        }
        guard indices.count == 2 else { return indices }
        var days = [indices[0]]
        var day = indices[0]
        while day != indices[1] {
            day = (day + 1) % 7
            days.append(day)
        }
        return days
    }

    private static func range(_ word: String) throws(TimeLimitsError) -> Range {
        let ends = word.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard ends.count == 2 else { throw TimeLimitsError("\"\(word)\" is not a range of hours like 07:30-20:00") }
        let start = try minute(ends[0]), end = try minute(ends[1])
        guard start < 1440 else { throw TimeLimitsError("\"\(word)\" starts at 24:00: a range starts at 23:59 at the latest") }
        guard start < end else {
            throw TimeLimitsError("\"\(word)\" ends before it starts: a range cannot cross midnight (end one day at 24:00, start the next at 00:00)")
        }
        return Range(start: start, end: end)
    }

    private static func minute(_ text: String) throws(TimeLimitsError) -> Int {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]), minutes < 60,
              hours < 24 || (hours == 24 && minutes == 0) else {
            throw TimeLimitsError("\"\(text)\" is not a time of day like 07:30 (00:00 to 24:00)")
        }
        return hours * 60 + minutes
    }
}

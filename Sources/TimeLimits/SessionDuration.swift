/// A length of session time in whole seconds, written `90m`, `2h`, `1h30m`
/// or `45s` (tests use seconds), at most a day.
public struct SessionDuration: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var seconds: Int

    public init(seconds: Int) {
        self.seconds = seconds
    }

    /// Reads `2h`, `90m`, `1h30m`, `45s` and their mixes (each unit once, largest first).
    /// - Throws: ``TimeLimitsError`` for anything else, or more than 24 hours.
    public init(parsing text: String) throws(TimeLimitsError) {
        let trimmed = TimeLimitsError.trimmed(text)
        let example = "write it like 90m, 2h or 1h30m"
        guard !trimmed.isEmpty, trimmed.utf8.count <= 32 else { throw TimeLimitsError("\"\(trimmed)\" is not a length of time: \(example)") }
        var total = 0, number = "", units: [Character] = []
        for character in trimmed {
            if let digit = character.wholeNumberValue, character.isASCII {
                number.append(Character(String(digit)))
                continue
            }
            let scale: Int
            switch character {
            case "h": scale = 3600
            case "m": scale = 60
            case "s": scale = 1
            default: throw TimeLimitsError("\"\(trimmed)\" is not a length of time: \(example)")
            }
            guard !number.isEmpty, number.count <= 5, let value = Int(number),
                  units.last.map({ Self.order($0) < Self.order(character) }) ?? true else {
                throw TimeLimitsError("\"\(trimmed)\" is not a length of time: \(example)")
            }
            units.append(character)
            total += value * scale
            number = ""
        }
        guard number.isEmpty, !units.isEmpty else { throw TimeLimitsError("\"\(trimmed)\" has no unit: \(example)") }
        guard total <= 86_400 else { throw TimeLimitsError("\"\(trimmed)\" is more than a day (24h)") }
        seconds = total
    }

    private static func order(_ unit: Character) -> Int { unit == "h" ? 0 : unit == "m" ? 1 : 2 }

    /// `1h30m`, `45m`, `2h`, `30s`: the shortest text that reads back the same.
    public var description: String {
        if seconds == 0 { return "0m" }
        var text = ""
        if seconds >= 3600 { text += "\(seconds / 3600)h" }
        if seconds % 3600 >= 60 { text += "\(seconds % 3600 / 60)m" }
        if seconds % 60 != 0 { text += "\(seconds % 60)s" }
        return text
    }

    /// For a person: `1 h 30 min`, `45 min`, `30 s`.
    public var spoken: String {
        var parts: [String] = []
        if seconds >= 3600 { parts.append("\(seconds / 3600) h") }
        if seconds % 3600 >= 60 { parts.append("\(seconds % 3600 / 60) min") }
        if seconds % 60 != 0 || seconds == 0 { parts.append("\(seconds % 60) s") }
        return parts.joined(separator: " ")
    }

    public static func < (a: SessionDuration, b: SessionDuration) -> Bool { a.seconds < b.seconds }
}

/// Text from someone else (an app's name, a path a child chose) made safe to
/// show on a terminal or in a log line.
///
/// Control characters (C0, DEL, C1) would move the cursor, recolour or clear
/// what an administrator or a guardian reads; Unicode's format characters
/// (bidirectional controls, zero-width and invisible characters, the soft
/// hyphen, the Arabic letter mark: general category Cf), the line and
/// paragraph separators (Zl, Zp) and the Hangul fillers, which show as
/// blanks, can make one name read as another or break a line. Each becomes a
/// visible escape (`\x1B`, `\u{202E}`), so nothing is hidden and nothing is
/// lost.
public enum DisplayText {
    /// `text` with every control and formatting character escaped, cut to
    /// `limit` characters (an ellipsis marks the cut).
    public static func sanitized(_ text: some StringProtocol, limit: Int = 4096) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x00..<0x20, 0x7f, 0x80..<0xa0:
                out += "\\x" + hex(scalar.value, width: 2)
            case _ where isInvisible(scalar):
                out += "\\u{" + hex(scalar.value, width: 4) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Format characters (Cf), line and paragraph separators (Zl, Zp), the
    /// Hangul fillers (letters by category, blanks on screen), and U+2065,
    /// unassigned among the invisible operators and isolates.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x115f, 0x1160, 0x3164, 0xffa0, 0x2065:
            return true
        default:
            switch scalar.properties.generalCategory {
            case .format, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// `text` with `&`, `<` and `>` as entities, for the body of a desktop
    /// notification (whose markup, in the Desktop Notifications
    /// Specification, is a subset of XML), so a name cannot add a link, an
    /// image or formatting.
    public static func markupEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    ///
    /// Read as bytes, as the ASCII checks below are: a short-lived program
    /// (familyctl) that parses its configuration then never touches the
    /// standard library's grapheme breaking or its Unicode tables, pages it
    /// would otherwise map at every start.
    @inlinable package func trimmingWhitespace() -> String {
        let bytes = utf8
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }) else { return "" }
        var last = first
        for index in bytes[first...].indices where !isSpace(bytes[index]) { last = index }
        // Both ends are next to an ASCII byte or the text's ends: whole scalars.
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// Where `needle` first occurs in this text, compared byte for byte
    /// (UTF-8). The standard library's `firstRange(of:)` and `contains(_:)`
    /// for text link the regex engine into a program; this does not.
    @inlinable package func firstByteRange(of needle: some StringProtocol) -> Range<String.Index>? {
        let bytes = utf8, pattern = Array(needle.utf8)
        var start = bytes.startIndex
        while true {
            if bytes[start...].starts(with: pattern) { return start..<bytes.index(start, offsetBy: pattern.count) }
            guard start != bytes.endIndex else { return nil }
            bytes.formIndex(after: &start)
        }
    }

    /// Whether `needle` occurs in this text, compared byte for byte (``firstByteRange(of:)``).
    @inlinable package func containsBytes(of needle: some StringProtocol) -> Bool {
        firstByteRange(of: needle) != nil
    }

    /// Whether every byte is an ASCII letter or digit, or one of `others`
    /// (ASCII punctuation such as `"_.-"`): the names of users, services,
    /// keys and apps. Anything outside ASCII is refused.
    @inlinable package func isASCIIName(alsoAllowing others: String = "") -> Bool {
        utf8.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || others.utf8.contains($0) }
    }

    /// The leading ASCII digits and the text after them.
    @inlinable package var splitAtLeadingDigits: (digits: String, rest: String) {
        let bytes = utf8
        let end = bytes.firstIndex { !$0.isASCIIDigit } ?? bytes.endIndex
        return (String(decoding: bytes[..<end], as: UTF8.self), String(decoding: bytes[end...], as: UTF8.self))
    }

    /// At most 60 characters, safe to show: for quoting hostile input in messages.
    package var clipped: String {
        DisplayText.sanitized(self, limit: 60)
    }
}

extension UInt8 {
    /// `A` to `Z` or `a` to `z`.
    @inlinable package var isASCIILetter: Bool { (self | 0x20) &- UInt8(ascii: "a") < 26 }
    /// `0` to `9`.
    @inlinable package var isASCIIDigit: Bool { self &- UInt8(ascii: "0") < 10 }
}

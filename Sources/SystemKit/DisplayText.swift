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
    package func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }

    /// At most 60 characters, safe to show: for quoting hostile input in messages.
    package var clipped: String {
        DisplayText.sanitized(self, limit: 60)
    }
}

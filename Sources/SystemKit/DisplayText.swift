/// Text from someone else (an app's name, a path a child chose) made safe to
/// show on a terminal or in a log line.
///
/// Control characters (C0, DEL, C1) would move the cursor, recolour or clear
/// what an administrator or a guardian reads, and Unicode's bidirectional and
/// invisible formatting characters can make one name read as another. Each
/// becomes a visible escape (`\x1B`, `\u{202E}`), so nothing is hidden and
/// nothing is lost.
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
            case 0x200b...0x200f, 0x202a...0x202e, 0x2060...0x2069, 0xfeff, 0xfff9...0xfffb:
                out += "\\u{" + hex(scalar.value, width: 4) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
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

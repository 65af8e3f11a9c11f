import SystemKit

/// A systemd-style INI file: `[Section]` or `[Section argument]` headers,
/// `Key=Value` lines, `#` and `;` comment lines, and `#` comments after
/// whitespace at the end of a value. Lines end with LF or CRLF.
///
/// Only the syntax lives here; which keys mean what is ``GuardConfiguration``'s.
///
/// Parsing takes at most 48 bytes of heap per byte of text, plus 64 KiB: an
/// entry costs about 40 bytes, and the shortest entry line (`a=`) is 3.
package struct INIFile: Sendable {
    package struct Entry: Hashable, Sendable {
        package var key: String
        package var value: String
        package var line: Int
    }

    package struct Section: Hashable, Sendable {
        /// `Family` in `[Family]`, `Child` in `[Child alice]`.
        package var name: String
        /// `alice` in `[Child alice]`; nil for a plain header.
        package var argument: String?
        package var line: Int
        package var entries: [Entry]
    }

    package var path: String
    package var sections: [Section]

    /// Parses `text`, read from `path` (named in errors).
    /// - Throws: ``ConfigError`` with the line of the first problem.
    package init(parsing text: String, path: String) throws(ConfigError) {
        self.path = path
        sections = []
        var lineNumber = 0
        for rawLine in TextLines(text) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.utf8.contains(0) {
                throw ConfigError(file: path, line: lineNumber, "NUL byte in the file")
            }
            if line.hasPrefix("[") {
                sections.append(try Self.header(line, path: path, line: lineNumber))
                continue
            }
            guard let equals = line.utf8.firstIndex(of: UInt8(ascii: "=")) else {
                throw ConfigError(file: path, line: lineNumber, "expected Key=Value or [Section], found \"\(line.clipped)\"")
            }
            let key = line[..<equals].trimmingWhitespace()
            guard !key.isEmpty, key.isASCIIName() else {
                throw ConfigError(file: path, line: lineNumber, "expected a key made of letters and digits before \"=\", found \"\(key.clipped)\"")
            }
            guard !sections.isEmpty else {
                throw ConfigError(file: path, line: lineNumber, "\(key)= appears before any [Section] header")
            }
            let value = Self.stripComment(line[line.utf8.index(after: equals)...]).trimmingWhitespace()
            sections[sections.count - 1].entries.append(Entry(key: key, value: value, line: lineNumber))
        }
    }

    private static func header(_ line: String, path: String, line number: Int) throws(ConfigError) -> Section {
        guard line.hasSuffix("]"), line.count > 2 else {
            throw ConfigError(file: path, line: number, "expected a section header like [Family], found \"\(line.clipped)\"")
        }
        let inner = line.dropFirst().dropLast().trimmingWhitespace()
        let words = inner.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard (1...2).contains(words.count), words[0].utf8.allSatisfy(\.isASCIILetter) else {
            throw ConfigError(file: path, line: number, "expected [Name] or [Name argument], found \"\(line.clipped)\"")
        }
        return Section(name: words[0], argument: words.count == 2 ? words[1] : nil, line: number, entries: [])
    }

    /// Drops a `#` comment that follows whitespace; a `#` inside a word stays.
    private static func stripComment(_ value: Substring) -> Substring {
        let bytes = value.utf8
        var previous = UInt8(ascii: " ")
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "#") && (previous == UInt8(ascii: " ") || previous == UInt8(ascii: "\t")) {
                return value[..<index]
            }
            previous = byte
            bytes.formIndex(after: &index)
        }
        return value
    }
}

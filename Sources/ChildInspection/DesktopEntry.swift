/// The parts of an app's desktop entry (`APPID.desktop`) the Guard reads:
/// the display name, the `Exec=` program, and the Family Controls capability
/// (`X-FamilyControls=true`), the analogue of Apple's entitlement.
///
/// Follows the freedesktop.org Desktop Entry format: only the
/// `[Desktop Entry]` group counts; other groups (actions) are skipped.
/// Lines end with LF or CRLF. Parsing keeps one line at a time: it takes at
/// most 4 bytes of heap per byte of text, plus 64 KiB.
package struct DesktopEntry: Hashable, Sendable {
    /// The largest entry read; real ones are a few hundred bytes.
    package static let sizeLimit = 64 << 10
    package var name: String?
    /// The program of `Exec=`: its first word, field codes and arguments dropped.
    package var program: String?
    package var declaresFamilyControls: Bool
    /// Every value of `X-FamilyControls-UpdateKey=` in the main group, in
    /// order: the key that signs the app's updates. More than one is an error
    /// its reader reports, not a choice made here.
    package var updateKeys: [String]
    /// Every value of `X-FamilyControls-Version=` in the main group, in order.
    package var versions: [String]
    /// `X-FamilyControls-Monitor=`, the app's monitor command as written; the
    /// first one given (``MonitorCommand`` reads it).
    package var monitor: String?
    /// `X-FamilyControls-MonitorRequired=`, as written; the first one given
    /// (``MonitorRequirement`` reads it).
    package var monitorRequired: String?

    /// Parses the text of a desktop entry. Lines it does not understand are ignored,
    /// as desktop environments do.
    ///
    /// Read as bytes, as desktop environments read it: a `Character` can join
    /// a quote, `=` or space to the combining mark after it, so that
    /// `Exec="\u{6E2}app"` would not start with a quote at all.
    package init(parsing text: String) {
        name = nil
        program = nil
        declaresFamilyControls = false
        updateKeys = []
        versions = []
        monitor = nil
        monitorRequired = nil
        var inMainGroup = false
        // Split as bytes: a line feed ends a line even inside a CRLF `Character`.
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let line = Self.trimmed(rawLine)
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            if first == UInt8(ascii: "[") {
                inMainGroup = line.elementsEqual("[Desktop Entry]".utf8)
                continue
            }
            guard inMainGroup, let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = Self.trimmed(line[..<equals])
            let value = Self.trimmed(line[line.index(after: equals)...])
            if key.elementsEqual("Name".utf8) {
                name = name ?? String(Substring(value))
            } else if key.elementsEqual("Exec".utf8) {
                program = Self.program(of: value)
            } else if key.elementsEqual("X-FamilyControls".utf8) {
                declaresFamilyControls = value.elementsEqual("true".utf8)
            } else if key.elementsEqual("X-FamilyControls-UpdateKey".utf8) {
                updateKeys.append(String(Substring(value)))
            } else if key.elementsEqual("X-FamilyControls-Version".utf8) {
                versions.append(String(Substring(value)))
            } else if key.elementsEqual("X-FamilyControls-Monitor".utf8) {
                monitor = monitor ?? String(Substring(value))
            } else if key.elementsEqual("X-FamilyControls-MonitorRequired".utf8) {
                monitorRequired = monitorRequired ?? String(Substring(value))
            }
        }
    }

    /// The first word of an `Exec=` value, with the spec's double quotes removed.
    private static func program(of exec: Substring.UTF8View) -> String? {
        let quote = UInt8(ascii: "\"")
        if exec.first == quote {
            let rest = exec.dropFirst()
            guard let close = rest.firstIndex(of: quote) else { return nil }
            return String(Substring(rest[..<close]))
        }
        return exec.split(separator: UInt8(ascii: " "), maxSplits: 1).first.map { String(Substring($0)) }
    }

    /// `bytes` without leading and trailing spaces, tabs and carriage returns.
    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
              let last = bytes.lastIndex(where: { !isSpace($0) }) else { return bytes[bytes.endIndex...] }
        return bytes[first...last]
    }
}

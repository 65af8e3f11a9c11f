import FamilyConfiguration
/// The parts of an app's desktop entry (`APPID.desktop`) the Guard reads:
/// the display name, the `Exec=` program, and the Family Controls capability
/// (`X-FamilyControls=true`), the analogue of Apple's entitlement.
///
/// Follows the freedesktop.org Desktop Entry format: only the
/// `[Desktop Entry]` group counts; other groups (actions) are skipped.
package struct DesktopEntry: Hashable, Sendable {
    package var name: String?
    /// The program of `Exec=`: its first word, field codes and arguments dropped.
    package var program: String?
    package var declaresFamilyControls: Bool

    /// Parses the text of a desktop entry. Lines it does not understand are ignored,
    /// as desktop environments do.
    package init(parsing text: String) {
        name = nil
        program = nil
        declaresFamilyControls = false
        var inMainGroup = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.trimmingWhitespace()
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("[") {
                inMainGroup = line == "[Desktop Entry]"
                continue
            }
            guard inMainGroup, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingWhitespace()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            switch key {
            case "Name": name = name ?? value
            case "Exec": program = Self.program(of: value)
            case "X-FamilyControls": declaresFamilyControls = value == "true"
            default: break
            }
        }
    }

    /// The first word of an `Exec=` value, with the spec's double quotes removed.
    private static func program(of exec: String) -> String? {
        if exec.hasPrefix("\"") {
            let rest = exec.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { return nil }
            return String(rest[..<close])
        }
        return exec.split(separator: " ", maxSplits: 1).first.map(String.init)
    }
}

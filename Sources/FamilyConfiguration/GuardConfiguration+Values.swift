/// The values of `familycontrols.conf`'s keys, each read from one entry and
/// failing with a ``ConfigError`` naming the entry's line.
extension GuardConfiguration {
    /// A list value: repeated keys add to the list, an empty value clears it (systemd's rule).
    static func principals(_ entry: INIFile.Entry, current: [Principal], file: String) throws(ConfigError) -> [Principal] {
        if entry.value.isEmpty { return [] }
        var result = current
        for token in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            guard let principal = Principal(token) else {
                throw ConfigError(file: file, line: entry.line,
                                  "\(entry.key)= expects user names or @group names, found \"\(token.clipped)\"")
            }
            if !result.contains(principal) { result.append(principal) }
        }
        return result
    }

    /// `ApprovedApps=`: app IDs separated by commas (or spaces); repeated
    /// keys add, an empty value clears. Each remembers the file that named it.
    static func approvedApps(_ entry: INIFile.Entry, current: [ConfiguredApproval], file: String) throws(ConfigError) -> [ConfiguredApproval] {
        if entry.value.isEmpty { return [] }
        var result = current
        for token in entry.value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init) {
            guard TrustedUpdateKey.isAppID(token) else {
                throw ConfigError(file: file, line: entry.line, "ApprovedApps= expects app IDs such as org.example.Filter, "
                    + "separated by commas, found \"\(token.clipped)\"")
            }
            guard !result.contains(where: { $0.appID == token }) else { continue }
            guard result.count < ConfiguredApproval.limit else {
                throw ConfigError(file: file, line: entry.line, "at most \(ConfiguredApproval.limit) ApprovedApps= a family")
            }
            result.append(ConfiguredApproval(appID: token, file: file))
        }
        return result
    }

    static func roots(_ entry: INIFile.Entry, current: [String], file: String) throws(ConfigError) -> [String] {
        if entry.value.isEmpty { return [] }
        var result = current
        for token in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            if let problem = AppRootTemplate.problem(with: token) {
                throw ConfigError(file: file, line: entry.line, "Roots= \(problem), found \"\(token.clipped)\"")
            }
            if !result.contains(token) { result.append(token) }
        }
        return result
    }

    /// `Installations=`: absolute, normalized folders (no `.`, `..` or empty
    /// part, no trailing `/`), neither `/` itself.
    static func installations(_ entry: INIFile.Entry, current: [String], file: String) throws(ConfigError) -> [String] {
        if entry.value.isEmpty { return [] }
        var result = current
        for token in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            let parts = token.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            guard token.hasPrefix("/"), token.utf8.count <= 1024, !parts.isEmpty,
                  !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
                throw ConfigError(file: file, line: entry.line,
                                  "Installations= expects absolute folders such as /var/lib/flatpak-extra, found \"\(token.clipped)\"")
            }
            if !result.contains(token) { result.append(token) }
        }
        return result
    }

    /// `TrustedKeys=`: `ed25519:BASE64` (every app) or `APPID=ed25519:BASE64`
    /// (one app), separated by spaces; repeated keys add, an empty value clears.
    static func trustedKeys(_ entry: INIFile.Entry, current: [TrustedUpdateKey],
                                    file: String) throws(ConfigError) -> [TrustedUpdateKey] {
        if entry.value.isEmpty { return [] }
        var result = current
        for token in entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            guard let key = TrustedUpdateKey(token) else {
                throw ConfigError(file: file, line: entry.line, "TrustedKeys= expects ed25519:BASE64 (the value of an app's "
                    + "X-FamilyControls-UpdateKey=) or APPID=ed25519:BASE64, found \"\(token.clipped)\"")
            }
            if !result.contains(key) { result.append(key) }
        }
        return result
    }

    static func service(_ entry: INIFile.Entry, file: String) throws(ConfigError) -> String {
        let value = entry.value
        guard !value.isEmpty, value.utf8.count <= 128, !value.hasPrefix("."),
              value.isASCIIName(alsoAllowing: "_.-") else {
            throw ConfigError(file: file, line: entry.line,
                              "\(entry.key)= expects a pam.d service name (letters, digits, _ . -), found \"\(value.clipped)\"")
        }
        return value
    }

    /// A retention such as `90d`, `26w` or `2y` (365 days each), from 1 day
    /// to 100 years; `infinity` keeps everything.
    static func retention(_ entry: INIFile.Entry, file: String) throws(ConfigError) -> Duration? {
        let value = entry.value.lowercased()
        if value == "infinity" { return nil }
        let (digits, rest) = value.splitAtLeadingDigits
        let unit = rest.trimmingWhitespace()
        let days: [String: Int] = ["d": 1, "day": 1, "days": 1, "w": 7, "week": 7, "weeks": 7, "y": 365, "year": 365, "years": 365]
        guard let number = Int(digits), digits.count <= 6, let factor = days[unit] else {
            throw ConfigError(file: file, line: entry.line,
                              "Retention= expects a time such as 90d, 26w or 2y, or infinity, found \"\(entry.value.clipped)\"")
        }
        guard (1...36_500).contains(number * factor) else {
            throw ConfigError(file: file, line: entry.line,
                              "Retention= must be between 1d and 100y, or infinity, found \"\(entry.value.clipped)\"")
        }
        return .seconds(number * factor * 86_400)
    }

    /// One absolute, normalized path (no empty, `.` or `..` part), at most 1024 bytes.
    static func absolutePath(_ entry: INIFile.Entry, example: String, file: String) throws(ConfigError) -> String {
        let parts = entry.value.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard entry.value.hasPrefix("/"), entry.value.utf8.count <= 1024, !parts.isEmpty,
              !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.contains(where: \.isWhitespace) }) else {
            throw ConfigError(file: file, line: entry.line,
                              "\(entry.key)= expects an absolute path such as \(example), found \"\(entry.value.clipped)\"")
        }
        return entry.value
    }

    /// `InSessionApproval=`: yes or no as ``boolean(_:file:)`` reads them, or `code`.
    static func inSessionApproval(_ entry: INIFile.Entry, file: String) throws(ConfigError) -> InSessionApproval {
        switch entry.value.lowercased() {
        case "code": return .code
        case "yes", "true", "on", "1": return .yes
        case "no", "false", "off", "0": return .no
        default:
            throw ConfigError(file: file, line: entry.line,
                              "InSessionApproval= expects yes, no or code, found \"\(entry.value.clipped)\"")
        }
    }

    /// `yes`/`no`, as systemd spells booleans (`true`/`false`, `on`/`off`, `1`/`0` too).
    static func boolean(_ entry: INIFile.Entry, file: String) throws(ConfigError) -> Bool {
        switch entry.value.lowercased() {
        case "yes", "true", "on", "1": return true
        case "no", "false", "off", "0": return false
        default:
            throw ConfigError(file: file, line: entry.line, "\(entry.key)= expects yes or no, found \"\(entry.value.clipped)\"")
        }
    }

    /// `VerifyInterval=`: `0` (or `off`) for never, else a time from 1s to 24h.
    static func interval(_ entry: INIFile.Entry, file: String) throws(ConfigError) -> Duration? {
        if entry.value.lowercased() == "off" { return nil }
        let interval = try duration(entry, file: file, allowing: 0...86_400_000)
        if interval == .zero { return nil }
        guard interval >= .seconds(1) else {
            throw ConfigError(file: file, line: entry.line,
                              "\(entry.key)= must be 0 (off) or between 1s and 24h, found \"\(entry.value.clipped)\"")
        }
        return interval
    }

    /// A time such as `60s`, `2min` or `1h`, within `allowing` (milliseconds).
    static func duration(_ entry: INIFile.Entry, file: String,
                                 allowing allowed: ClosedRange<Int> = 1000...3_600_000) throws(ConfigError) -> Duration {
        let value = entry.value
        let (digits, rest) = value.splitAtLeadingDigits
        let unit = rest.trimmingWhitespace()
        let scale: [String: Int] = ["": 1000, "s": 1000, "sec": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "ms": 1]
        guard let number = Int(digits), let factor = scale[unit], number <= 86_400_000 else {
            throw ConfigError(file: file, line: entry.line,
                              "\(entry.key)= expects a time such as 60s, 2min or 1h, found \"\(value.clipped)\"")
        }
        let product = number.multipliedReportingOverflow(by: factor)
        guard !product.overflow, allowed.contains(product.partialValue) else {
            let lowest = allowed.lowerBound == 0 ? "0" : "\(allowed.lowerBound / 1000)s"
            let highest = allowed.upperBound >= 86_400_000 ? "24h" : "1h"
            throw ConfigError(file: file, line: entry.line,
                              "\(entry.key)= must be between \(lowest) and \(highest), found \"\(value.clipped)\"")
        }
        let milliseconds = product.partialValue
        return .milliseconds(milliseconds)
    }
}

import Foundation
import TestSupport

/// The shipped `Config/systemd/familycontrolsd.service`, read as systemd
/// reads it, so tests take the Guard's sandbox from the unit itself and the
/// two cannot drift apart.
struct ShippedUnit {
    static let path = "\(packageRoot)/Config/systemd/familycontrolsd.service"

    /// Every assignment of `[Service]`, in order, continuation lines joined.
    let assignments: [(key: String, value: String)]

    static func load() throws -> ShippedUnit {
        try ShippedUnit(parsing: String(contentsOfFile: path, encoding: .utf8))
    }

    /// Parses `text`: sections, `#` and `;` comments, and values continued
    /// with a trailing backslash (systemd.syntax(7)).
    init(parsing text: String) throws {
        var section = ""
        var found: [(key: String, value: String)] = []
        var pending = ""
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = pending.isEmpty ? raw.trimmingCharacters(in: .whitespaces) : pending + " " + raw.trimmingCharacters(in: .whitespaces)
            pending = ""
            if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
            if line.hasSuffix("\\") {
                pending = String(line.dropLast())
                continue
            }
            if line.hasPrefix("[") {
                section = line
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { throw FixtureError("\(Self.path): not an assignment: \(line)") }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            line = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if section == "[Service]" { found.append((key, line)) }
        }
        assignments = found
    }

    /// The values assigned to `key`, in order; an empty assignment clears
    /// those before it, as systemd treats list settings.
    func values(_ key: String) -> [String] {
        var result: [String] = []
        for (name, value) in assignments where name == key {
            if value.isEmpty { result.removeAll() } else { result.append(value) }
        }
        return result
    }

    /// The last value of `key`, which is the one in force for a single-valued setting.
    func value(_ key: String) -> String? { values(key).last }

    /// `CapabilityBoundingSet=`: the capabilities the Guard keeps, as
    /// `CAP_NAME`, sorted. Several lines add up; an inverted (`~`) list is
    /// not something the unit uses, so it is refused rather than misread.
    func capabilities() throws -> [String] {
        var set = Set<String>()
        for line in values("CapabilityBoundingSet") {
            guard !line.hasPrefix("~") else { throw FixtureError("CapabilityBoundingSet=\(line): an inverted list") }
            for name in line.split(separator: " ") {
                guard name.hasPrefix("CAP_") else { throw FixtureError("CapabilityBoundingSet=: \(name) is not a capability") }
                set.insert(String(name))
            }
        }
        return set.sorted()
    }

    /// The trees `ProtectSystem=` mounts read-only (systemd.exec(5)). `strict`,
    /// the whole file system, is refused: the Guard must write under `/home`.
    func readOnlyTrees() throws -> [String] {
        switch value("ProtectSystem") ?? "no" {
        case "no", "false": return []
        case "yes", "true": return ["/usr", "/boot", "/efi"]
        case "full": return ["/usr", "/boot", "/efi", "/etc"]
        case let other: throw FixtureError("ProtectSystem=\(other): the app folders under /home must stay writable")
        }
    }

    /// `ReadWritePaths=`, without the `-` that lets a path be missing.
    var writablePaths: [String] {
        values("ReadWritePaths").flatMap { $0.split(separator: " ") }.map { String($0.drop { $0 == "-" }) }
    }

    /// The exit statuses of `RestartPreventExitStatus=`.
    var restartPreventedStatuses: [Int32] {
        values("RestartPreventExitStatus").flatMap { $0.split(separator: " ") }.compactMap { Int32($0) }
    }
}

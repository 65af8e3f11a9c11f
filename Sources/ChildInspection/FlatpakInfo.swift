import FlatpakNames

/// What Flatpak says about a sandbox in its `/.flatpak-info`: the app and
/// the deployment it runs from. Flatpak writes the file when it starts the
/// sandbox, but anyone who runs bubblewrap can write one of their own, so a
/// value here is a claim the Guard checks against the files (see
/// ``FlatpakDeployment``), never a fact.
///
/// The syntax is GLib's key file (`GKeyFile`), read strictly: at most
/// ``sizeLimit`` bytes of UTF-8, lines of at most ``lineLimit`` bytes ending
/// in LF, no NUL or other control character but tab, no group or key given
/// twice, no key outside a group, no line that is neither a group, a key,
/// a comment nor blank. Where GKeyFile would take the last of two values,
/// merge two groups, or skip a line, this refuses the file: Flatpak never
/// writes one like that. The values read must be plain (no `\` escapes) and
/// valid for their key. Parsing keeps the keys of `[Application]` and
/// `[Instance]` and the names of the other groups: it takes at most 16
/// bytes of heap per byte of text, plus 64 KiB.
package struct FlatpakInfo: Hashable, Sendable {
    /// The largest file read; Flatpak's own are a few KiB.
    package static let sizeLimit = 64 << 10
    /// The longest line: room for a `[Context] filesystems=` list well past
    /// what apps ask for, and for a path of `PATH_MAX` bytes.
    package static let lineLimit = 16 << 10

    /// `[Application] name`: the app ID, e.g. `org.example.Demo`.
    package var appID: String
    /// `[Application] runtime`, e.g. `runtime/org.freedesktop.Platform/x86_64/24.08`.
    package var runtime: String?
    /// `[Instance] app-path`: the deployment's `files` folder on the host.
    package var appPath: String
    /// `[Instance] app-commit`: the deployment's OSTree commit (64 hex digits).
    package var appCommit: String
    /// `[Instance] runtime-path`: the runtime deployment's `files` folder.
    package var runtimePath: String?
    /// `[Instance] runtime-commit`: the runtime deployment's commit.
    package var runtimeCommit: String?
    /// `[Instance] instance-id`: the number under `$XDG_RUNTIME_DIR/.flatpak/`.
    package var instanceID: String
    /// `[Instance] branch`, e.g. `stable`.
    package var branch: String
    /// `[Instance] arch`, e.g. `x86_64`.
    package var arch: String
    /// `[Instance] flatpak-version`, e.g. `1.16.0`.
    package var flatpakVersion: String?

    package init(appID: String, runtime: String? = nil, appPath: String, appCommit: String,
                 runtimePath: String? = nil, runtimeCommit: String? = nil, instanceID: String, branch: String,
                 arch: String, flatpakVersion: String? = nil) {
        self.appID = appID
        self.runtime = runtime
        self.appPath = appPath
        self.appCommit = appCommit
        self.runtimePath = runtimePath
        self.runtimeCommit = runtimeCommit
        self.instanceID = instanceID
        self.branch = branch
        self.arch = arch
        self.flatpakVersion = flatpakVersion
    }

    /// Parses the bytes of a `.flatpak-info`.
    /// - Throws: ``FlatpakInfoError`` naming the line or the key at fault.
    package init(parsing bytes: [UInt8]) throws(FlatpakInfoError) {
        guard bytes.count <= Self.sizeLimit else { throw .tooLarge(limit: Self.sizeLimit) }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notText }
        // Only the groups the Guard reads keep their keys; of the others, the
        // names, so that a group given twice is refused wherever it is.
        var groups: [String: [String: String]] = ["Application": [:], "Instance": [:]]
        var seen: Set<String> = []
        var current: String?
        var number = 0
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.endIndex
            let line = bytes[start..<end]
            start = end + 1
            number += 1
            guard line.count <= Self.lineLimit else { throw .lineTooLong(line: number, limit: Self.lineLimit) }
            if line.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { throw .controlCharacter(line: number) }
            // Bytes, not Characters: a combining mark after `[`, `=` or `#`
            // would join it into one Character and hide it.
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }
            guard let first = trimmed.first, first != UInt8(ascii: "#") else { continue }
            if first == UInt8(ascii: "[") {
                guard trimmed.last == UInt8(ascii: "]"), trimmed.count >= 3 else { throw .malformedLine(line: number) }
                let inside = trimmed.dropFirst().dropLast()
                guard !inside.contains(where: { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) else {
                    throw .malformedLine(line: number)
                }
                let name = String(decoding: inside, as: UTF8.self)
                guard seen.insert(name).inserted else { throw .duplicateGroup(line: number) }
                current = name
                continue
            }
            guard let group = current else { throw .keyOutsideGroup(line: number) }
            guard let equals = trimmed.firstIndex(of: UInt8(ascii: "=")) else { throw .malformedLine(line: number) }
            var keyBytes = trimmed[..<equals]
            while let last = keyBytes.last, last == 0x20 || last == 0x09 { keyBytes = keyBytes.dropLast() }
            guard Self.isKey(keyBytes) else { throw .malformedLine(line: number) }
            guard groups[group] != nil else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            let value = String(decoding: trimmed[(equals + 1)...].drop { $0 == 0x20 || $0 == 0x09 }, as: UTF8.self)
            guard groups[group]?[key] == nil else { throw .duplicateKey(line: number) }
            groups[group]?[key] = value
        }

        func value(_ group: String, _ key: String) throws(FlatpakInfoError) -> String? {
            guard let value = groups[group]?[key] else { return nil }
            guard !value.utf8.contains(UInt8(ascii: "\\")) else { throw .invalidValue(group: group, key: key) }
            return value
        }
        func required(_ group: String, _ key: String, valid: (String) -> Bool) throws(FlatpakInfoError) -> String {
            guard let found = try value(group, key) else { throw .missing(group: group, key: key) }
            guard valid(found) else { throw .invalidValue(group: group, key: key) }
            return found
        }
        func optional(_ group: String, _ key: String, valid: (String) -> Bool) throws(FlatpakInfoError) -> String? {
            guard let found = try value(group, key) else { return nil }
            guard valid(found) else { throw .invalidValue(group: group, key: key) }
            return found
        }

        guard seen.contains("Application") else { throw .notAnApp }
        appID = try required("Application", "name", valid: FlatpakNames.isValidAppID)
        runtime = try optional("Application", "runtime", valid: FlatpakNames.isValidRef)
        appPath = try required("Instance", "app-path", valid: FlatpakNames.isNormalizedAbsolutePath)
        appCommit = try required("Instance", "app-commit", valid: FlatpakNames.isCommit)
        runtimePath = try optional("Instance", "runtime-path", valid: FlatpakNames.isNormalizedAbsolutePath)
        runtimeCommit = try optional("Instance", "runtime-commit", valid: FlatpakNames.isCommit)
        instanceID = try required("Instance", "instance-id", valid: FlatpakNames.isInstanceID)
        branch = try required("Instance", "branch", valid: FlatpakNames.isValidBranch)
        arch = try required("Instance", "arch", valid: FlatpakNames.isValidArch)
        flatpakVersion = try optional("Instance", "flatpak-version", valid: FlatpakNames.isFlatpakVersion)
    }

    /// A key as GKeyFile takes one (bus names, variable names, `key[locale]`):
    /// not empty, `[` and `]` only around a locale at its end.
    private static func isKey(_ key: ArraySlice<UInt8>) -> Bool {
        var bytes = key
        if bytes.last == UInt8(ascii: "]") {
            guard let open = bytes.firstIndex(of: UInt8(ascii: "[")), open > bytes.startIndex,
                  bytes[(open + 1)..<(bytes.endIndex - 1)].allSatisfy({ FlatpakNames.isAlphanumeric($0) || "_-.@".utf8.contains($0) })
            else { return false }
            bytes = bytes[..<open]
        }
        return !bytes.isEmpty && !bytes.contains { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }
    }


}

/// Why a `.flatpak-info` is refused. A refusal names lines and the keys the
/// Guard reads, never text of the file: a child can mount a file only root
/// may read where the Guard looks for this one.
package enum FlatpakInfoError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooLarge(limit: Int)
    case notText
    case lineTooLong(line: Int, limit: Int)
    case controlCharacter(line: Int)
    case malformedLine(line: Int)
    case keyOutsideGroup(line: Int)
    case duplicateGroup(line: Int)
    case duplicateKey(line: Int)
    /// There is no `[Application]` group: a runtime's sandbox, not an app's.
    case notAnApp
    case missing(group: String, key: String)
    case invalidValue(group: String, key: String)

    package var description: String {
        switch self {
        case .tooLarge(let limit): ".flatpak-info is larger than \(limit) bytes"
        case .notText: ".flatpak-info is not UTF-8 text"
        case .lineTooLong(let line, let limit): ".flatpak-info line \(line) is longer than \(limit) bytes"
        case .controlCharacter(let line): ".flatpak-info line \(line) holds a control character"
        case .malformedLine(let line): ".flatpak-info line \(line) is neither a group, a key, a comment nor blank"
        case .keyOutsideGroup(let line): ".flatpak-info line \(line) sets a key outside any group"
        case .duplicateGroup(let line): ".flatpak-info line \(line) starts a group given before"
        case .duplicateKey(let line): ".flatpak-info line \(line) sets a key set before in its group"
        case .notAnApp: ".flatpak-info has no [Application] group: the sandbox is not an app's"
        case .missing(let group, let key): ".flatpak-info has no \(key) in [\(group)]"
        case .invalidValue(let group, let key): ".flatpak-info's \(key) in [\(group)] is not a valid value"
        }
    }
}

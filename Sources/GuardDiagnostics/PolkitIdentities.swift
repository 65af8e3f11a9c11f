#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The identities polkit's files name: `AdminIdentities=` in the local
/// authority's `.conf` files (pklocalauthority(8)) and `unix-user:`,
/// `unix-group:`, `isInGroup("…")` and `user == "…"` in its JavaScript rules
/// (polkit(8)). Rules are programs, not read here: a mention is reported as
/// a possibility, for the administrator to judge.
struct PolkitIdentities {
    struct Mention: Hashable {
        var file: String
        var line: Int
        var way: String
        fileprivate var user: String?
        fileprivate var group: String?
    }

    private var mentions: [Mention] = []

    init(sources: ChildPrivilegeCheck.Sources) {
        for folder in sources.polkitAuthorities {
            for file in Self.files(in: folder, ending: ".conf") { readAuthority(file) }
        }
        for folder in sources.polkitRules {
            for file in Self.files(in: folder, ending: ".rules") { readRules(file) }
        }
    }

    /// The mentions naming `account` or a group it is in.
    func mentions(of account: UserAccount, groups: GroupMembership) -> [Mention] {
        mentions.filter { mention in
            if let user = mention.user { return user == account.name || user == String(account.uid) }
            if let group = mention.group { return groups.contains(named: group) || gid_t(group).map(groups.ids.contains) == true }
            return false
        }
    }

    private mutating func readAuthority(_ file: String) {
        for (number, line) in Self.lines(file) {
            let text = line.trimmingWhitespace()
            guard text.hasPrefix("AdminIdentities"), let equals = text.firstIndex(of: "=") else { continue }
            for identity in text[text.index(after: equals)...].split(separator: ";") {
                add(identity.trimmingWhitespace(), file: file, line: number, way: "polkit AdminIdentities= \(identity.trimmingWhitespace().clipped)")
            }
        }
    }

    private mutating func readRules(_ file: String) {
        for (number, line) in Self.lines(file) {
            let text = line.trimmingWhitespace()
            guard !text.hasPrefix("//") else { continue }
            for prefix in ["unix-user:", "unix-group:"] {
                var rest = text[...]
                while let range = rest.firstByteRange(of: prefix) {
                    let name = rest[range.upperBound...].prefix(while: { Self.isNameCharacter($0) })
                    add(prefix + name, file: file, line: number, way: "polkit rule names \(prefix)\(String(name).clipped)")
                    rest = rest[range.upperBound...]
                }
            }
            for (call, kind) in [("isInGroup(", "unix-group:"), ("user ==", "unix-user:"), ("user===", "unix-user:"), ("user ===", "unix-user:")] {
                var rest = text[...]
                while let range = rest.firstByteRange(of: call) {
                    let after = rest[range.upperBound...].drop(while: { $0 == " " || $0 == "\"" || $0 == "'" })
                    let name = after.prefix(while: { Self.isNameCharacter($0) })
                    if !name.isEmpty { add(kind + name, file: file, line: number, way: "polkit rule names \(kind)\(String(name).clipped)") }
                    rest = rest[range.upperBound...]
                }
            }
        }
    }

    private mutating func add(_ identity: String, file: String, line: Int, way: String) {
        var mention = Mention(file: file, line: line, way: way)
        if identity.hasPrefix("unix-user:") {
            mention.user = String(identity.dropFirst("unix-user:".count))
        } else if identity.hasPrefix("unix-group:") {
            mention.group = String(identity.dropFirst("unix-group:".count))
        } else {
            return
        }
        if !mentions.contains(mention) { mentions.append(mention) }
    }

    private static func isNameCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "_.-$".contains(character))
    }

    private static func files(in folder: String, ending suffix: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasSuffix(suffix) { names.append(name) }
        }
        closedir(directory)
        return names.sorted().map { "\(folder)/\($0)" }
    }

    private static func lines(_ file: String) -> [(Int, Substring)] {
        guard let bytes = try? FileDescriptor.readFile(file, limit: 1 << 20) else { return [] }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { ($0.offset + 1, $0.element) }
    }
}

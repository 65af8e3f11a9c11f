#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The rules of `doas.conf` (OpenBSD's doas and OpenDoas, doas.conf(5)):
/// `permit|deny [options] identity [as target] [cmd command [args ...]]`,
/// the identity a user (name or uid) or `:group`, the last matching rule
/// deciding. Read well enough to tell who may run what as whom; a line it
/// cannot read is skipped.
struct DoasRules {
    /// One rule, with where it is written.
    struct Rule: Equatable {
        var file: String
        var line: Int
        var permit: Bool
        /// A user name or uid, or `:group` (a name or gid).
        var identity: String
        /// nil when no `as` was given: every user, root included.
        var target: String?
        /// nil when no `cmd` was given: every command.
        var command: String?
        var text: String
    }

    private(set) var rules: [Rule] = []
    /// Files that exist but could not be read (not root, say).
    private(set) var unreadable: [(file: String, error: Errno)] = []

    /// Reads each of `paths` that exists, in order.
    init(paths: [String]) {
        for path in paths {
            do throws(Errno) {
                let bytes = try FileDescriptor.readFile(path, limit: 1 << 20)
                rules += Self.parse(String(decoding: bytes, as: UTF8.self), file: path)
            } catch {
                if error.rawValue != ENOENT { unreadable.append((path, error)) }
            }
        }
    }

    /// The rules of one file's text.
    static func parse(_ text: String, file: String) -> [Rule] {
        var rules: [Rule] = []
        for (number, words) in logicalLines(text) {
            guard let first = words.first, first == "permit" || first == "deny" else { continue }
            var rest = words.dropFirst()
            // Options: nopass, nolog, persist, keepenv, setenv { … }.
            while let word = rest.first, isOption(word) {
                rest = rest.dropFirst()
                if word == "setenv", rest.first?.hasPrefix("{") == true {
                    while let inner = rest.popFirst(), !inner.hasSuffix("}") {}
                }
            }
            guard let identity = rest.first else { continue }
            rest = rest.dropFirst()
            var rule = Rule(file: file, line: number, permit: first == "permit", identity: identity, target: nil, command: nil,
                            text: words.joined(separator: " "))
            if rest.first == "as" {
                guard let target = rest.dropFirst().first else { continue }
                rule.target = target
                rest = rest.dropFirst(2)
            }
            if rest.first == "cmd" {
                guard let command = rest.dropFirst().first else { continue }
                rule.command = command
            }
            rules.append(rule)
        }
        return rules
    }

    private static func isOption(_ word: String) -> Bool {
        ["nopass", "nolog", "persist", "keepenv", "setenv"].contains(word)
    }

    /// Words of each line, `#` comments removed, `\` joining lines and
    /// escaping a character, `"…"` quoting, with the number of the line each starts on.
    static func logicalLines(_ text: String) -> [(Int, [String])] {
        var result: [(Int, [String])] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var quoted = false
        var line = 1
        var start = 1
        var characters = text.makeIterator()
        func endWord() {
            if inWord { words.append(word) }
            word = ""
            inWord = false
        }
        while let character = characters.next() {
            switch character {
            case "\\":
                guard let next = characters.next() else { break }
                if next == "\n" { line += 1; endWord(); continue }
                word.append(next)
                inWord = true
            case "\"":
                quoted.toggle()
                inWord = true
            case "\n":
                line += 1
                if quoted { word.append(character); continue }
                endWord()
                if !words.isEmpty { result.append((start, words)) }
                words = []
                start = line
            case "#" where !quoted:
                endWord()
                while let skipped = characters.next(), skipped != "\n" {}
                line += 1
                if !words.isEmpty { result.append((start, words)) }
                words = []
                start = line
            case " " where !quoted, "\t" where !quoted:
                endWord()
            default:
                word.append(character)
                inWord = true
            }
        }
        endWord()
        if !words.isEmpty { result.append((start, words)) }
        return result
    }

    // MARK: Matching

    /// What doas lets `user` do as `target`: the rule that lets it run every
    /// command, or else the rules that let it run some, each the last word
    /// for what it covers.
    func grants(_ user: UserAccount, groups: GroupMembership, as target: UserAccount)
        -> (everyCommand: Rule?, someCommands: [Rule]) {
        let matching = rules.filter { Self.includes($0.identity, user: user, groups: groups) && Self.runs(as: $0.target, target) }
        // The last rule for every command decides every command but those a later `cmd` rule names.
        let lastGeneral = matching.lastIndex { $0.command == nil }
        if let lastGeneral, matching[lastGeneral].permit {
            return (matching[lastGeneral], [])
        }
        var some: [Rule] = []
        for (index, rule) in matching.enumerated() where rule.permit && rule.command != nil {
            let overridden = matching[(index + 1)...].contains { later in
                later.command == nil || later.command == rule.command
            }
            if !overridden { some.append(rule) }
        }
        return (nil, some)
    }

    /// Whether the identity names `user`: its name or uid, or `:group` (a name or gid) it is in.
    static func includes(_ identity: String, user: UserAccount, groups: GroupMembership) -> Bool {
        if identity.hasPrefix(":") {
            let group = String(identity.dropFirst())
            return gid_t(group).map(groups.ids.contains) ?? groups.contains(named: group)
        }
        return identity == user.name || uid_t(identity) == user.uid
    }

    /// Whether the rule's `as` (nil: anyone) is `target`, by name or uid.
    static func runs(as written: String?, _ target: UserAccount) -> Bool {
        guard let written else { return true }
        return written == target.name || uid_t(written) == target.uid
    }
}

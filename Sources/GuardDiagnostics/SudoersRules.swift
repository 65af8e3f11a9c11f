#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The user specifications of `/etc/sudoers` and the files it includes, read
/// well enough to tell who may run what as whom (sudoers(5)). Not a full
/// parser: host lists are taken to match this host, netgroups never match,
/// and a line it cannot read is skipped. It errs towards reporting.
struct SudoersRules {
    /// One `USERS HOSTS = (RUNAS) COMMANDS` entry, one command group of it.
    struct Rule {
        var file: String
        var line: Int
        var users: [String]
        /// nil when no `(…)` was given: root only.
        var runAs: [String]?
        var commands: [String]
        var text: String
    }

    private(set) var rules: [Rule] = []
    /// Files that exist but could not be read (not root, say).
    private(set) var unreadable: [(file: String, error: Errno)] = []
    private var userAliases: [String: [String]] = [:]
    private var runAsAliases: [String: [String]] = [:]
    private var commandAliases: [String: [String]] = [:]

    /// Reads `path` and what it includes; nothing when `path` does not exist (no sudo here).
    init(path: String) {
        read(path, depth: 0)
    }

    private mutating func read(_ path: String, depth: Int) {
        guard depth < 8 else { return }
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileDescriptor.readFile(path, limit: 1 << 20)
        } catch {
            if error.rawValue != ENOENT { unreadable.append((path, error)) }
            return
        }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        for (number, line) in Self.logicalLines(String(decoding: bytes, as: UTF8.self)) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = words.first else { continue }
            switch first {
            case "@include", "#include":
                if words.count > 1 { read(Self.resolve(words[1], in: folder), depth: depth + 1) }
            case "@includedir", "#includedir":
                if words.count > 1 { readFolder(Self.resolve(words[1], in: folder), depth: depth + 1) }
            case _ where first.hasPrefix("Defaults"):
                continue
            case "User_Alias": define(line.dropFirst(first.count), into: &userAliases)
            case "Runas_Alias": define(line.dropFirst(first.count), into: &runAsAliases)
            case "Cmnd_Alias", "Cmd_Alias": define(line.dropFirst(first.count), into: &commandAliases)
            case "Host_Alias": continue
            default:
                rules += Self.specification(line, file: path, line: number)
            }
        }
    }

    /// `@includedir`: every file whose name has no `.` and does not end in `~`, in order.
    private mutating func readFolder(_ path: String, depth: Int) {
        guard let directory = opendir(path) else { return }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if !name.contains(".") && !name.hasSuffix("~") { names.append(name) }
        }
        closedir(directory)
        for name in names.sorted() { read("\(path)/\(name)", depth: depth) }
    }

    private static func resolve(_ path: String, in folder: String) -> String {
        path.hasPrefix("/") ? path : "\(folder)/\(path)"
    }

    /// `NAME = a, b : NAME2 = c`
    private func define(_ text: Substring, into aliases: inout [String: [String]]) {
        for definition in text.split(separator: ":") {
            guard let equals = definition.firstIndex(of: "=") else { continue }
            let name = definition[..<equals].trimmingWhitespace()
            aliases[name] = Self.list(definition[definition.index(after: equals)...])
        }
    }

    private static func list(_ text: Substring) -> [String] {
        text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// Lines with `\` continuations joined and comments removed, with the number of their first line.
    private static func logicalLines(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var pending = ""
        var start = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if pending.isEmpty { start = index + 1 }
            var line = Substring(raw)
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            line = Substring(pending + line)
            pending = ""
            let trimmed = withoutComment(line).trimmingWhitespace()
            if !trimmed.isEmpty { result.append((start, trimmed)) }
        }
        return result
    }

    /// `#` starts a comment, except in `#include`, `#includedir` and a `#UID`.
    private static func withoutComment(_ line: Substring) -> Substring {
        let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
        if trimmed.hasPrefix("#include") { return trimmed }
        var index = line.startIndex
        while let hash = line[index...].firstIndex(of: "#") {
            let next = line.index(after: hash)
            if next < line.endIndex, line[next].isASCII, line[next].isNumber { index = next; continue }
            return line[..<hash]
        }
        return line
    }

    /// `USERS HOSTS = [(RUNAS)] [TAGS:] COMMAND, [(RUNAS)] COMMAND …`; later
    /// `: HOSTS = …` parts are read with the same users.
    private static func specification(_ text: String, file: String, line: Int) -> [Rule] {
        guard let equals = text.firstIndex(of: "=") else { return [] }
        // `alice, bob  ALL`: spaces beside a comma belong to the list; the first other space ends it.
        let head = text[..<equals].split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingWhitespace() }.joined(separator: ",")
        guard let userField = head.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { return [] }
        let users = list(userField)
        let shown = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        var rules: [Rule] = []
        var runAs: [String]?
        var commands: [String] = []
        func flush() {
            if !commands.isEmpty { rules.append(Rule(file: file, line: line, users: users, runAs: runAs, commands: commands, text: shown)) }
            commands = []
        }
        for item in text[text.index(after: equals)...].split(separator: ",") {
            var rest = item.trimmingWhitespace()[...]
            if rest.hasPrefix("("), let close = rest.firstIndex(of: ")") {
                flush()
                let inside = rest[rest.index(after: rest.startIndex)..<close]
                // `(users:groups)`: only the users change who the command runs as.
                let userPart = inside.split(separator: ":", omittingEmptySubsequences: false).first ?? ""
                runAs = userPart.trimmingWhitespace().isEmpty && inside.contains(":") ? [] : list(userPart)
                rest = rest[rest.index(after: close)...].drop(while: { $0 == " " })
            }
            // Tags (NOPASSWD:, SETENV: …) and options (ROLE=…, CWD=…) before the command.
            while let colon = rest.firstIndex(of: ":"), rest[..<colon].allSatisfy({ $0.isUppercase || $0 == "_" }),
                  !rest[..<colon].isEmpty {
                rest = rest[rest.index(after: colon)...].drop(while: { $0 == " " })
            }
            while let word = rest.split(separator: " ").first, word.contains("="),
                  word.prefix(while: { $0 != "=" }).allSatisfy({ $0.isUppercase || $0 == "_" }) {
                rest = rest.dropFirst(word.count).drop(while: { $0 == " " })
            }
            let command = rest.trimmingWhitespace()
            if !command.isEmpty { commands.append(command) }
        }
        flush()
        return rules
    }

    // MARK: Matching

    /// Whether the user list `items` includes `user` (last match wins; `!` excludes).
    func includes(_ items: [String], user: UserAccount, groups: GroupMembership, depth: Int = 0) -> Bool {
        var included = false
        for raw in items {
            let negated = raw.hasPrefix("!")
            let item = negated ? String(raw.dropFirst()).trimmingWhitespace() : raw
            let matches: Bool
            if item == "ALL" {
                matches = true
            } else if let members = userAliases[item] ?? runAsAliases[item], depth < 8 {
                matches = includes(members, user: user, groups: groups, depth: depth + 1)
            } else if item.hasPrefix("%#") {
                matches = gid_t(item.dropFirst(2)).map(groups.ids.contains) ?? false
            } else if item.hasPrefix("%:") || item.hasPrefix("%") {
                matches = groups.contains(named: String(item.drop(while: { $0 == "%" || $0 == ":" })))
            } else if item.hasPrefix("#") {
                matches = uid_t(item.dropFirst()) == user.uid
            } else {
                matches = item == user.name
            }
            if matches { included = !negated }
        }
        return included
    }

    /// Whether the command list allows every command (`ALL`, or an alias of it).
    func allowsEveryCommand(_ commands: [String], depth: Int = 0) -> Bool {
        commands.contains { command in
            command == "ALL" || (depth < 8 && commandAliases[command].map { allowsEveryCommand($0, depth: depth + 1) } == true)
        }
    }
}

/// The groups one user is in, by ID (`getgrouplist(3)`) and, looked up as
/// needed, by name.
struct GroupMembership {
    let ids: Set<gid_t>

    init(_ account: UserAccount) {
        ids = Set(UserDatabase.groupIDs(of: account))
    }

    func contains(named name: String) -> Bool {
        guard let group = (try? UserDatabase.group(named: name)) ?? nil else { return false }
        return ids.contains(group.gid)
    }
}

import FamilyConfiguration
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The files a child must not be able to change: the Guard's programs, its
/// systemd units, its PAM services (and what they include), its
/// configuration and store, and each guardian's login files. Each is
/// examined once, with every folder above it, through the path as written
/// and through the path it resolves to; ``Target/writer(_:_:)`` then answers
/// per child.
struct ProtectedFiles {
    struct Target {
        var path: String
        var outcome: String
        var why: String
        fileprivate var steps: [Step]

        /// How `child` could change the file, or nil when it cannot:
        /// it owns the file or a folder above, or may write one (every user,
        /// or a group it is in). A sticky folder above protects what it holds.
        func writer(_ child: UserAccount, _ membership: GroupMembership) -> String? {
            for step in steps {
                let mode = String(step.mode & 0o7777, radix: 8)
                if step.uid == child.uid { return "owns \(step.path)" }
                if step.shielded { continue }
                if step.mode & 0o002 != 0 { return "every user may write \(step.path) (mode \(mode))" }
                if step.mode & 0o020 != 0 && membership.ids.contains(step.gid) {
                    let group = ((try? UserDatabase.group(id: step.gid)) ?? nil)?.name ?? String(step.gid)
                    return "member of group \(group), which may write \(step.path) (mode \(mode))"
                }
            }
            return nil
        }
    }

    fileprivate struct Step {
        var path: String
        var uid: uid_t
        var gid: gid_t
        var mode: mode_t
        /// A sticky folder above the target: no one else may rename or remove what it holds.
        var shielded: Bool
    }

    private(set) var targets: [Target] = []

    init(configPath: String, configuration: GuardConfiguration, pamDirectory: String?, stateDirectory: String?,
         guardians: [UserAccount]) {
        let program = "can change the Guard"
        var programs: [String] = []
        if let running = realpath("/proc/self/exe", nil) {
            let path = String(cString: running)
            free(running)
            programs += [path, Self.parent(of: path) + "/familyctl"]
        }
        programs += ["/usr/local/sbin/familycontrolsd", "/usr/sbin/familycontrolsd", "/usr/local/bin/familyctl", "/usr/bin/familyctl"]
        for path in programs {
            add(path, program, path.hasSuffix("/familyctl") ? "guardians type their password into familyctl"
                                                           : "the Guard's program runs as root")
        }
        for folder in ["/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
                       "/usr/lib/systemd/system", "/lib/systemd/system"] {
            for unit in ["familycontrolsd.service", "familycontrolsd.socket"] {
                add("\(folder)/\(unit)", program, "systemd starts the Guard from it as root")
                add("\(folder)/\(unit).d", program, "systemd reads drop-ins for the Guard's unit from it")
            }
        }
        let pam = pamDirectory ?? "/etc/pam.d"
        for service in Self.pamServices([configuration.guardianService, configuration.individualService,
                                                  configuration.guardianCodeService], in: pam) {
            add("\(pam)/\(service)", "can change how guardians authenticate", "PAM reads \(service) for the Guard")
        }
        add(configuration.guardianCodeFile, "can change which one-time codes a guardian's name takes",
            "pam_oath checks guardians' codes typed in a child's app against it")
        add(configPath, "can change the family configuration", "the configuration says who is a child and who a guardian")
        if let stateDirectory {
            add(stateDirectory, "can change the Guard's store", "the store records every approval")
        }
        for guardian in guardians where guardian.home.hasPrefix("/") && guardian.home != "/" {
            let outcome = "can log in as guardian \(guardian.name)"
            let why = "what runs when the guardian logs in can be changed"
            for file in ["", "/.ssh", "/.ssh/authorized_keys", "/.ssh/authorized_keys2", "/.ssh/rc", "/.profile",
                         "/.bash_profile", "/.bash_login", "/.bashrc", "/.zshenv", "/.zprofile", "/.zshrc",
                         "/.pam_environment", "/.config", "/.config/autostart"] {
                add(guardian.home + file, outcome, why)
            }
        }
    }

    /// Adds `path` when it exists; a path that does not is covered by the folder above it when that is listed too.
    private mutating func add(_ path: String, _ outcome: String, _ why: String) {
        var status = stat()
        guard lstat(path, &status) == 0, !targets.contains(where: { $0.path == path }) else { return }
        targets.append(Target(path: path, outcome: outcome, why: why, steps: Self.steps(path)))
    }

    /// The target and every folder above it, as written, through each link
    /// on the way, and as resolved.
    private static func steps(_ path: String) -> [Step] {
        var steps: [Step] = []
        func walk(_ start: String, follow: Bool) {
            var current = start
            var first = true
            while true {
                var status = stat()
                let found = follow ? stat(current, &status) == 0 : lstat(current, &status) == 0
                // A symbolic link's own owner and mode change nothing; the folder holding it is examined next.
                if found && status.st_mode & S_IFMT != S_IFLNK && !steps.contains(where: { $0.path == current }) {
                    let sticky = status.st_mode & S_ISVTX != 0 && !first
                    steps.append(Step(path: current, uid: status.st_uid, gid: status.st_gid, mode: status.st_mode, shielded: sticky))
                }
                if current == "/" || current.isEmpty { return }
                current = parent(of: current)
                first = false
            }
        }
        // A link to /dev/null masks the file (systemd's `mask`, a silenced login script): nothing written to
        // /dev/null is ever read back, so only the links and the folders holding them matter.
        let mask = "/dev/null"
        walk(path, follow: false)
        // Every link on the way to the file, and the folders holding it: one
        // in a folder the child may write can be pointed at a file of theirs.
        var hop = path
        for _ in 0..<40 {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(hop, &buffer, buffer.count - 1)
            guard count > 0 else { break }
            let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            hop = target.hasPrefix("/") ? target : parent(of: hop) + "/" + target
            if hop != mask { walk(hop, follow: false) }
        }
        if let resolved = realpath(path, nil) {
            let target = String(cString: resolved)
            free(resolved)
            if target != mask { walk(target, follow: true) }
        }
        return steps
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// `services` and every service they include (`@include`, `include`, `substack`), in `folder`.
    private static func pamServices(_ services: [String], in folder: String) -> [String] {
        var found: [String] = []
        var queue = services
        while let service = queue.first, found.count < 64 {
            queue.removeFirst()
            guard !found.contains(service), !service.contains("/") else { continue }
            found.append(service)
            guard let bytes = try? FileDescriptor.readFile("\(folder)/\(service)", limit: 1 << 20) else { continue }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                guard let first = words.first, !first.hasPrefix("#") else { continue }
                if first == "@include", words.count > 1 {
                    queue.append(words[1])
                } else if words.count > 2, ["include", "substack"].contains(words[1]) {
                    queue.append(words[2])
                }
            }
        }
        return found
    }
}

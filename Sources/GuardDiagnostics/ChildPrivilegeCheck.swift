import FamilyConfiguration
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Whether a child could become someone else: root (a root-equivalent
/// group, sudoers, doas, polkit, a setuid or capability program outside the
/// distribution's own), a guardian (sudoers, doas, a uid shared with one,
/// the guardian's login files), or the Guard itself (its program, units,
/// PAM services, configuration or store). Every lock is moot then, so `--check-config`
/// reports each way, naming the child and the way.
///
/// Unlike ``ConfigurationCheck`` these are facts about the machine, not the
/// configuration: the Guard logs them and serves on (its locks still hold
/// everyone else), and `familyctl status` shows them to root.
///
/// Children listed through a group are the group's listed members (NSS
/// cannot list the users whose primary group it is without enumerating every
/// account). File checks read owners and modes, not ACLs.
package enum ChildPrivilegeCheck {
    /// The files read; the machine's own by default.
    package struct Sources: Sendable {
        package var sudoers = "/etc/sudoers"
        /// OpenDoas's and a locally built doas's.
        package var doas = ["/etc/doas.conf", "/usr/local/etc/doas.conf"]
        package var polkitAuthorities = ["/etc/polkit-1/localauthority.conf.d"]
        package var polkitRules = ["/etc/polkit-1/rules.d", "/usr/share/polkit-1/rules.d"]
        /// Where programs live, searched for setuid and capability programs
        /// (a link among them, such as a merged /usr's `/bin`, is skipped).
        package var programFolders = ["/usr/local", "/usr/bin", "/usr/sbin", "/usr/libexec", "/usr/lib", "/usr/lib32",
                                      "/usr/lib64", "/usr/libx32", "/usr/games", "/bin", "/sbin", "/lib", "/lib64", "/opt"]
        /// dpkg's file lists and maintainer scripts, and `dpkg-statoverride`'s records.
        package var packageDatabase = "/var/lib/dpkg/info"
        package var statOverride = "/var/lib/dpkg/statoverride"
        /// Named in findings about shared uids, with the account's line.
        package var passwd = "/etc/passwd"
        package init() {}
    }

    /// Groups whose members can become root, or read what they must not.
    static let groups: [(name: String, severity: ConfigurationFinding.Severity, outcome: String, why: String)] = [
        ("root", .refused, "can become root", "group root may write many of root's files"),
        ("sudo", .refused, "can become root", "sudo and polkit make this group's members administrators"),
        ("wheel", .refused, "can become root", "sudo, su and polkit make this group's members administrators"),
        ("admin", .refused, "can become root", "sudo makes this group's members administrators"),
        ("disk", .refused, "can become root", "raw access to the disks: any file can be rewritten, the immutable attribute cleared"),
        ("docker", .refused, "can become root", "can run a root container with the machine's / mounted"),
        ("lxd", .refused, "can become root", "can run a privileged container with the machine's / mounted"),
        ("incus-admin", .refused, "can become root", "can run a privileged container with the machine's / mounted"),
        ("libvirt", .refused, "can become root", "can start a virtual machine on the machine's disks"),
        ("shadow", .warning, "can read password hashes", "a guardian's hash can be cracked offline"),
        ("adm", .warning, "can read system logs", "what the logs hold depends on the site"),
        ("kvm", .warning, "can use /dev/kvm", "direct access to the virtualization device"),
        ("input", .warning, "can read keyboards", "the guardian's password can be read as it is typed"),
        ("staff", .warning, "may write /usr/local", "on Debian, staff may change programs under /usr/local, where the Guard installs by default"),
    ]

    /// Every way found for the children of `configuration`.
    /// - Parameters:
    ///   - configPath: the configuration file, checked and named in findings about groups.
    ///   - pamDirectory: where the PAM services are read (default `/etc/pam.d`).
    ///   - stateDirectory: the Guard's store folder, when known.
    package static func report(configPath: String, configuration: GuardConfiguration, pamDirectory: String?,
                               stateDirectory: String?, sources: Sources = Sources()) -> ChildPrivilegeReport {
        var report = ChildPrivilegeReport()
        let children = accounts(childrenOf: configuration)
        guard !children.isEmpty else { return report }
        // By name: a guardian who shares a child's uid is still a guardian, whose files the child owns.
        let guardians = accounts(guardiansOf: configuration).filter { guardian in !children.contains { $0.name == guardian.name } }
        var knownGroups: [(entry: (name: String, severity: ConfigurationFinding.Severity, outcome: String, why: String), group: GroupEntry)] = []
        for entry in groups {
            switch Result(catching: { () throws(Errno) in try UserDatabase.group(named: entry.name) }) {
            case .success(let group?): knownGroups.append((entry, group))
            case .success(nil): continue
            case .failure(let error):
                report.unchecked.append(ConfigurationFinding(severity: .warning, file: configPath, line: 0,
                    message: "cannot look up group \(entry.name) (\(error)): whether a child is in it is not checked"))
            }
        }
        let sudoers = SudoersRules(path: sources.sudoers)
        for (file, error) in sudoers.unreadable {
            report.unchecked.append(ConfigurationFinding(severity: .warning, file: file, line: 0,
                message: "cannot be read (\(error)): what sudo allows the children is not checked; run --check-config as root"))
        }
        let doas = DoasRules(paths: sources.doas)
        for (file, error) in doas.unreadable {
            report.unchecked.append(ConfigurationFinding(severity: .warning, file: file, line: 0,
                message: "cannot be read (\(error)): what doas allows the children is not checked; run --check-config as root"))
        }
        let programs = ProgramReview(sources: sources, guardians: guardians,
                                     groups: Dictionary(knownGroups.map { ($0.group.gid, ($0.entry.severity, $0.entry.why)) },
                                                        uniquingKeysWith: { first, _ in first }))
        report.unchecked += programs.unchecked
        let shared = SharedUIDs(passwd: sources.passwd)
        report.unchecked += shared.unchecked
        let guardianNames = Set(accounts(guardiansOf: configuration).map(\.name))
        let files = ProtectedFiles(configPath: configPath, configuration: configuration, pamDirectory: pamDirectory,
                                   stateDirectory: stateDirectory, guardians: guardians)
        let polkit = PolkitIdentities(sources: sources)
        let root = ((try? UserDatabase.user(id: 0)) ?? nil) ?? UserAccount(name: "root", uid: 0, gid: 0, home: "/root", shell: "")

        for child in children {
            let membership = GroupMembership(child)
            let at = line(of: child.name, in: configPath)
            func add(_ severity: ConfigurationFinding.Severity, _ outcome: String, _ way: String, _ why: String,
                     file: String? = nil, line: Int? = nil) {
                let privilege = ChildPrivilege(child: child.name, severity: severity, outcome: outcome, way: way, why: why,
                                               file: file ?? configPath, line: line ?? at)
                if !report.privileges.contains(privilege) { report.privileges.append(privilege) }
            }
            for (entry, group) in knownGroups where membership.ids.contains(group.gid) {
                add(entry.severity, entry.outcome, "member of group \(group.name)", entry.why)
            }
            for rule in sudoers.rules where sudoers.includes(rule.users, user: child, groups: membership) {
                let every = sudoers.allowsEveryCommand(rule.commands)
                let runAs = rule.runAs ?? ["root"]
                let way = "sudoers: \(rule.text.clipped)"
                if sudoers.includes(runAs, user: root, groups: GroupMembership(root)) {
                    if every {
                        add(.refused, "can become root", way, "sudo runs every command as root for it", file: rule.file, line: rule.line)
                    } else {
                        add(.warning, "can run commands as root", way, "whether one of them gives a root shell depends on the commands",
                            file: rule.file, line: rule.line)
                    }
                    continue
                }
                for guardian in guardians where sudoers.includes(runAs, user: guardian, groups: GroupMembership(guardian)) {
                    if every {
                        add(.refused, "can log in as guardian \(guardian.name)", way, "sudo runs every command as that guardian for it",
                            file: rule.file, line: rule.line)
                    } else {
                        add(.warning, "can run commands as guardian \(guardian.name)", way,
                            "whether one of them gives that guardian's shell depends on the commands", file: rule.file, line: rule.line)
                    }
                }
            }
            // A rule with no `as` lets the child run as anyone: said once, as root.
            var said: Set<[String]> = []
            for target in [root] + guardians {
                let (every, some) = doas.grants(child, groups: membership, as: target)
                let isRoot = target.uid == 0
                let whom = isRoot ? "root" : "guardian \(target.name)"
                if let rule = every, said.insert([rule.file, String(rule.line)]).inserted {
                    add(.refused, isRoot ? "can become root" : "can log in as guardian \(target.name)", "doas: \(rule.text.clipped)",
                        "doas runs every command as \(whom) for it", file: rule.file, line: rule.line)
                }
                for rule in some where said.insert([rule.file, String(rule.line)]).inserted {
                    add(.warning, "can run commands as \(whom)", "doas: \(rule.text.clipped)",
                        "whether one of them gives \(isRoot ? "a root shell" : "that guardian's shell") depends on the commands",
                        file: rule.file, line: rule.line)
                }
            }
            for privilege in programs.privileges(of: child, groups: membership) {
                add(privilege.severity, privilege.outcome, privilege.way, privilege.why, file: privilege.file, line: privilege.line)
            }
            for privilege in shared.privileges(of: child, guardians: guardianNames) {
                add(privilege.severity, privilege.outcome, privilege.way, privilege.why,
                    file: privilege.file.isEmpty ? nil : privilege.file, line: privilege.file.isEmpty ? nil : privilege.line)
            }
            for mention in polkit.mentions(of: child, groups: membership) {
                add(.warning, "may be a polkit administrator", mention.way,
                    "polkit may let it act as an administrator with its own password, depending on the rule",
                    file: mention.file, line: mention.line)
            }
            for target in files.targets {
                guard let way = target.writer(child, membership) else { continue }
                add(.refused, target.outcome, way, target.why, file: target.path, line: 0)
            }
        }
        return report
    }

    /// The children: users named in any family's `Children=`, the listed
    /// members of its groups, and `[Child NAME]` users who are children.
    /// Never root (refused elsewhere).
    static func accounts(childrenOf configuration: GuardConfiguration) -> [UserAccount] {
        let family = Family(configuration: configuration)
        let named = configuration.allFamilies.flatMap { names($0.children) } + configuration.childGuardians.keys.sorted()
        return unique(named).filter { account in account.uid != 0 && (try? family.isChild(account)) == true }
    }

    /// The guardians: every family's and every child's.
    static func accounts(guardiansOf configuration: GuardConfiguration) -> [UserAccount] {
        let principals = configuration.allFamilies.flatMap(\.guardians) + configuration.childGuardians.keys.sorted().flatMap { configuration.childGuardians[$0] ?? [] }
        return unique(names(principals)).filter { $0.uid != 0 }
    }

    private static func names(_ principals: [Principal]) -> [String] {
        principals.flatMap { principal -> [String] in
            switch principal {
            case .user(let name): [name]
            case .group(let name): ((try? UserDatabase.group(named: name)) ?? nil)?.members ?? []
            }
        }
    }

    private static func unique(_ names: [String]) -> [UserAccount] {
        var seen: Set<String> = []
        return names.compactMap { name in
            guard seen.insert(name).inserted else { return nil }
            return (try? UserDatabase.user(named: name)) ?? nil
        }
    }

    /// The first line of the configuration naming `name` as a word, or 0.
    private static func line(of name: String, in path: String) -> Int {
        guard let bytes = try? FileDescriptor.readFile(path, limit: 1 << 20) else { return 0 }
        for (index, text) in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = text.split(whereSeparator: { " \t=[]".contains($0) })
            if words.contains(where: { $0 == name }) { return index + 1 }
        }
        return 0
    }
}

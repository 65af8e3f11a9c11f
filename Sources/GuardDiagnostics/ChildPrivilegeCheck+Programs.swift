import FamilyConfiguration
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity

extension ChildPrivilegeCheck {
    /// The setuid, setgid and capability programs outside the distribution's
    /// own, each judged once: a program no package ships, or whose
    /// capabilities its package's maintainer script does not set, or whose
    /// owner and mode differ from its `dpkg-statoverride` entry. Refused
    /// when it runs as root or a guardian, as a root-equivalent group, or
    /// with a capability that defeats the locks; a warning otherwise.
    struct ProgramReview {
        struct Judged {
            var program: PrivilegedPrograms.Program
            var severity: ConfigurationFinding.Severity
            var outcome: String
            var way: String
            var why: String
            /// The uid it runs as (setuid), which means nothing to that same user.
            var runsAs: uid_t?
        }

        private(set) var judged: [Judged] = []
        private(set) var unchecked: [ConfigurationFinding] = []

        init(sources: Sources, guardians: [UserAccount], groups: [gid_t: (severity: ConfigurationFinding.Severity, why: String)], limits: GuardLimits = GuardLimits()) {
            let walk = PrivilegedPrograms(roots: sources.programFolders, entryLimit: limits.privilegedProgramEntries,
                                          depthLimit: limits.privilegedProgramDepth)
            for (folder, reason) in walk.incomplete {
                unchecked.append(ConfigurationFinding(severity: .warning, file: folder, line: 0,
                    message: "the search for setuid and capability programs stopped here (\(reason)): what lies below is not checked"))
            }
            let packages = DebianPackages(paths: Set(walk.programs.map(\.path)), info: sources.packageDatabase,
                                          statOverride: sources.statOverride, listLimit: limits.packageLists)
            guard packages.available else {
                if !walk.programs.isEmpty {
                    unchecked.append(ConfigurationFinding(severity: .warning, file: sources.packageDatabase, line: 0,
                        message: "no dpkg database: which setuid and capability programs are the distribution's is not known, "
                            + "so none is checked"))
                }
                return
            }
            for program in walk.programs {
                judge(program, packages: packages, guardians: guardians, groups: groups)
            }
        }

        /// What `child` gets from the programs it may run.
        func privileges(of child: UserAccount, groups: GroupMembership) -> [ChildPrivilege] {
            judged.filter { $0.runsAs != child.uid && $0.program.isExecutable(by: child, groups: groups) }.map {
                ChildPrivilege(child: child.name, severity: $0.severity, outcome: $0.outcome, way: $0.way, why: $0.why,
                               file: $0.program.path, line: 0)
            }
        }

        private mutating func judge(_ program: PrivilegedPrograms.Program, packages: DebianPackages, guardians: [UserAccount],
                                    groups: [gid_t: (severity: ConfigurationFinding.Severity, why: String)]) {
            let path = program.path
            let package = packages.owners[path]
            let mode = String(program.status.permissions, radix: 8)
            if program.setUID || program.setGID {
                var origin: String? = package == nil ? "which no package ships" : nil
                if package != nil, let override = packages.overrides[path], !Self.matches(override, program.status) {
                    origin = "whose dpkg-statoverride entry says \(override.user) \(override.group) \(String(override.mode, radix: 8))"
                }
                if let origin {
                    if program.setUID { judgeSetUID(program, mode: mode, origin: origin, guardians: guardians) }
                    if program.setGID { judgeSetGID(program, mode: mode, origin: origin, groups: groups) }
                }
            }
            if let capabilities = program.capabilities {
                let names = capabilities.numbers.map(FileCapabilities.name)
                if let package, packages.setsCapabilities(names, of: path, package: package) { return }
                let origin = package.map { "which package \($0) does not set" } ?? "which no package ships"
                let way = "\(path) has capabilities \(capabilities.text), \(origin)"
                let dangerous = capabilities.dangerous
                if dangerous.isEmpty {
                    add(program, .warning, "can run a program with \(names.joined(separator: ", "))", way,
                        "what they allow depends on the program")
                } else {
                    let outcome = dangerous.contains { $0.name == "cap_linux_immutable" } ? "can clear the locks"
                        : "can run a program with \(dangerous.map(\.name).joined(separator: ", "))"
                    add(program, .refused, outcome, way, dangerous.map(\.why).joined(separator: "; "))
                }
            }
        }

        private mutating func judgeSetUID(_ program: PrivilegedPrograms.Program, mode: String, origin: String,
                                          guardians: [UserAccount]) {
            let uid = program.status.uid
            if uid == 0 {
                add(program, .refused, "can run a program as root", "\(program.path) is setuid root (mode \(mode)), \(origin)",
                    "it runs with all of root's power, and was not shipped as a program written to be safe so", runsAs: 0)
            } else if let guardian = guardians.first(where: { $0.uid == uid }) {
                add(program, .refused, "can run a program as guardian \(guardian.name)",
                    "\(program.path) is setuid \(guardian.name) (mode \(mode)), \(origin)",
                    "it runs as that guardian, with the guardian's files", runsAs: uid)
            } else {
                let name = ((try? UserDatabase.user(id: uid)) ?? nil)?.name ?? "uid \(uid)"
                add(program, .warning, "can run a program as \(name)", "\(program.path) is setuid \(name) (mode \(mode)), \(origin)",
                    "what that user may do depends on the site", runsAs: uid)
            }
        }

        private mutating func judgeSetGID(_ program: PrivilegedPrograms.Program, mode: String, origin: String,
                                          groups: [gid_t: (severity: ConfigurationFinding.Severity, why: String)]) {
            let gid = program.status.gid
            let name = ((try? UserDatabase.group(id: gid)) ?? nil)?.name ?? "gid \(gid)"
            let way = "\(program.path) is setgid \(name) (mode \(mode)), \(origin)"
            if let group = groups[gid] {
                add(program, group.severity, "can run a program as group \(name)", way, group.why)
            } else if gid == 0 {
                add(program, .refused, "can run a program as group \(name)", way, "group root may write many of root's files")
            } else {
                add(program, .warning, "can run a program as group \(name)", way, "what that group may do depends on the site")
            }
        }

        private mutating func add(_ program: PrivilegedPrograms.Program, _ severity: ConfigurationFinding.Severity,
                                  _ outcome: String, _ way: String, _ why: String, runsAs: uid_t? = nil) {
            judged.append(Judged(program: program, severity: severity, outcome: outcome, way: way, why: why, runsAs: runsAs))
        }

        /// Whether the file's owner, group and mode are what the override records (names or `#ID`).
        private static func matches(_ override: DebianPackages.Override, _ status: FileStatus) -> Bool {
            func id(_ written: String, _ lookup: (String) -> UInt32?) -> UInt32? {
                written.hasPrefix("#") ? UInt32(written.dropFirst()) : lookup(written)
            }
            let uid = id(override.user) { ((try? UserDatabase.user(named: $0)) ?? nil)?.uid }
            let gid = id(override.group) { ((try? UserDatabase.group(named: $0)) ?? nil)?.gid }
            return uid == status.uid && gid == status.gid && override.mode & 0o7777 == status.permissions
        }
    }
}

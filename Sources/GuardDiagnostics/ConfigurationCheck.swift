import FamilyConfiguration
#if canImport(Glibc)
import Glibc
#endif
import PAM
import SystemKit

/// One thing `familycontrolsd --check-config` has to say about the configuration.
package struct ConfigurationFinding: Hashable, Sendable, CustomStringConvertible {
    package enum Severity: String, Sendable {
        /// Unsafe: the Guard refuses to start with it, and a reload keeps the previous configuration.
        case refused
        /// Probably not what was meant; the Guard runs with it.
        case warning
    }

    package var severity: Severity
    package var file: String
    /// 1-based; 0 for the file as a whole.
    package var line: Int
    package var message: String

    package init(severity: Severity, file: String, line: Int, message: String) {
        self.severity = severity
        self.file = file
        self.line = line
        self.message = message
    }

    package var description: String {
        (line > 0 ? "\(file):\(line): " : "\(file): ") + "\(severity.rawValue): \(message)"
    }
}

/// What `visudo -c` and `sshd -t` are to their files: a configuration that
/// parses can still be unsafe (a file anyone may edit, root as a child, a
/// PAM service that does not exist, so libpam quietly uses `other`) or
/// probably wrong (a guardian no one can find). Refusals stop the Guard from
/// starting and a reload from taking effect; warnings are logged.
package enum ConfigurationCheck {
    /// Everything found in the configuration `configuration`, read from `path`,
    /// with PAM services looked up in `pamDirectory` (default `/etc/pam.d`).
    package static func findings(path: String, configuration: GuardConfiguration,
                                 pamDirectory: String?) -> [ConfigurationFinding] {
        var findings: [ConfigurationFinding] = []
        if access(path, F_OK) == 0 { findings += fileSafety(path) }
        let folder = GuardConfiguration.dropInFolder(of: path)
        if access(folder, F_OK) == 0 { findings += fileSafety(folder, folder: true) }
        let dropIns = (try? GuardConfiguration.dropIns(of: path)) ?? []
        for dropIn in dropIns { findings += fileSafety(dropIn) }
        let files = ([path] + dropIns).compactMap { file in (try? readINI(file)) ?? nil }
        var review = Review(path: path, files: files, configuration: configuration)
        review.checkServices(pamDirectory: pamDirectory)
        review.checkPeople()
        review.checkFlatpakInstallations()
        review.checkFlatpakMove()
        return findings + review.findings
    }

    /// Whether any finding refuses the configuration.
    package static func refuses(_ findings: [ConfigurationFinding]) -> Bool {
        findings.contains { $0.severity == .refused }
    }

    private static func readINI(_ path: String) throws -> INIFile? {
        let text = String(decoding: try FileDescriptor.readFile(path, limit: 1 << 20), as: UTF8.self)
        return try? INIFile(parsing: text, path: path)
    }

    /// The file (or the drop-in folder, with `folder`), and every folder
    /// above it, must be root's and closed to other writers: otherwise
    /// whoever can write there decides who is a guardian. A sticky folder
    /// open to all (`/tmp`) is fine above a folder of root's, since no one
    /// else may rename or remove it.
    static func fileSafety(_ path: String, folder: Bool = false) -> [ConfigurationFinding] {
        func refuse(_ message: String) -> [ConfigurationFinding] {
            [ConfigurationFinding(severity: .refused, file: path, line: 0, message: message)]
        }
        guard let resolved = realpath(path, nil) else {
            return refuse("cannot be resolved: \(Errno(errno, operation: "realpath"))")
        }
        var current = String(cString: resolved)
        free(resolved)
        var first = true
        while true {
            var status = stat()
            guard stat(current, &status) == 0 else {
                return refuse("\(current) cannot be examined: \(Errno(errno, operation: "stat"))")
            }
            let what = first ? (folder ? "the drop-in folder" : "the file") : "the folder \(current)"
            let mode = String(status.st_mode & 0o7777, radix: 8)
            if first && status.st_mode & S_IFMT != (folder ? S_IFDIR : S_IFREG) {
                return refuse(folder ? "is not a folder" : "is not a regular file")
            }
            if status.st_uid != 0 {
                return refuse("\(what) belongs to uid \(status.st_uid), not root: that user decides who is a guardian")
            }
            let sticky = status.st_mode & S_ISVTX != 0 && !first
            if status.st_mode & 0o002 != 0 && !sticky {
                return refuse("\(what) can be written by every user (mode \(mode)): anyone could make themself a guardian")
            }
            if status.st_mode & 0o020 != 0 && status.st_gid != 0 && !sticky {
                return refuse("\(what) can be written by group \(status.st_gid) (mode \(mode)): its members could make themselves guardians")
            }
            if current == "/" { return [] }
            current = parent(of: current)
            first = false
        }
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

/// Where a finding points: a line of the main file or of a drop-in.
private struct Location: Equatable {
    var file: String
    /// 1-based; 0 for the file as a whole (a default no file sets).
    var line: Int
}

/// The checks that need the files' lines and NSS.
private struct Review {
    let path: String
    /// The main file and its drop-ins, in the order they apply.
    let files: [INIFile]
    let configuration: GuardConfiguration
    var findings: [ConfigurationFinding] = []

    init(path: String, files: [INIFile], configuration: GuardConfiguration) {
        self.path = path
        self.files = files
        self.configuration = configuration
    }

    /// The main file as a whole: for what no line sets.
    var whole: Location { Location(file: path, line: 0) }

    mutating func note(_ severity: ConfigurationFinding.Severity, line at: Location, _ message: String) {
        let finding = ConfigurationFinding(severity: severity, file: at.file, line: at.line, message: message)
        if !findings.contains(finding) { findings.append(finding) }
    }

    /// The first `key=` line in `section` mentioning `token` (or any `key=`
    /// line when `token` is nil), in the main file or a drop-in.
    func line(section: String, argument: String? = nil, key: String, token: String? = nil) -> Location {
        for file in files {
            for candidate in file.sections where candidate.name == section && candidate.argument == argument {
                for entry in candidate.entries where entry.key == key {
                    let tokens = entry.value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                    if token.map({ tokens.contains($0) }) ?? true { return Location(file: file.path, line: entry.line) }
                }
            }
        }
        return whole
    }

    func sectionLine(_ name: String, argument: String?) -> Location {
        for file in files {
            if let section = file.sections.first(where: { $0.name == name && $0.argument == argument }) {
                return Location(file: file.path, line: section.line)
            }
        }
        return whole
    }

    mutating func checkServices(pamDirectory: String?) {
        for (key, service) in [("GuardianService", configuration.guardianService),
                               ("IndividualService", configuration.individualService)] {
            guard let problem = PAMServiceFile.problem(service: service, directory: pamDirectory) else { continue }
            let at = line(section: "Authentication", key: key)
            if at.line > 0 {
                // Named here, so most likely a typo: without the check libpam
                // would have used "other", skipping the site's rules.
                note(.refused, line: at, "\(key)=\(service): \(problem); every authentication on it would be refused")
            } else {
                note(.warning, line: whole, "\(key) (default \(service)): \(problem); authentication on it is refused "
                    + "until it is installed (Config/install.sh or the package installs it)")
            }
        }
    }

    /// `[Flatpak] Installations=`: each is trusted as the system one is, so
    /// it must be a folder of root's that only root may change; otherwise
    /// its apps are refused, which is worth saying before anyone asks.
    mutating func checkFlatpakInstallations() {
        for path in configuration.flatpakInstallations {
            let at = line(section: "Flatpak", key: "Installations", token: path)
            var status = stat()
            guard lstat(path, &status) == 0 else {
                note(.warning, line: at, "Installations=\(path): no such folder; its apps are refused until it exists")
                continue
            }
            let found = FileStatus(status)
            if found.type != .directory {
                note(.warning, line: at, "Installations=\(path): not a folder (a link is not followed); its apps are refused")
            } else if found.uid != 0 || found.permissions & 0o022 != 0 {
                note(.warning, line: at, "Installations=\(path): belongs to uid \(found.uid) with mode "
                    + "\(String(found.permissions, radix: 8)); a Flatpak installation the Guard trusts must be root's "
                    + "and closed to other writers, so its apps are refused")
            }
        }
    }

    /// `[Flatpak] MoveService=` and `GuardInstallation=`, when the file names
    /// them: a socket other than the default that is not there (a typing
    /// mistake, most likely) means approved per-user apps are locked in place
    /// instead; the Guard's installation must be root's. The defaults missing
    /// is a machine without the move service, which the log already says.
    mutating func checkFlatpakMove() {
        let defaults = GuardConfiguration()
        let serviceLine = line(section: "Flatpak", key: "MoveService")
        if let socket = configuration.flatpakMoveService, serviceLine.line > 0, socket != defaults.flatpakMoveService,
           access(socket, F_OK) != 0 {
            note(.warning, line: serviceLine, "MoveService=\(socket): no socket there; approved per-user Flatpak apps are "
                + "locked in place until the move service listens (systemctl enable --now familycontrols-flatpak.socket)")
        }
        let installationLine = line(section: "Flatpak", key: "GuardInstallation")
        guard installationLine.line > 0 else { return }
        let path = configuration.flatpakGuardInstallation
        var status = stat()
        guard lstat(path, &status) == 0 else {
            if path != defaults.flatpakGuardInstallation {
                note(.warning, line: installationLine, "GuardInstallation=\(path): no such folder; "
                    + "the move service cannot move an app into it")
            }
            return
        }
        let found = FileStatus(status)
        if found.type != .directory || found.uid != 0 || found.permissions & 0o022 != 0 {
            note(.warning, line: installationLine, "GuardInstallation=\(path): not a folder of root's closed to other "
                + "writers; apps in it are refused")
        }
    }

    mutating func checkPeople() {
        // Children: root never; unknown names are worth a warning.
        var children: Set<String> = []
        for family in configuration.allFamilies {
            for principal in family.children {
                let at = line(section: "Family", argument: family.sectionArgument, key: "Children", token: principal.description)
                children.formUnion(members(of: principal, line: at, role: "Children="))
            }
        }
        if children.contains("root") {
            note(.refused, line: line(section: "Family", key: "Children"),
                 "root is a child here (Children=): root cannot be locked out of anything, and must not need approval")
        }
        for (child, guardians) in configuration.childGuardians.sorted(by: { $0.key < $1.key }) {
            let at = sectionLine("Child", argument: child)
            if child == "root" || (try? UserDatabase.user(named: child))??.uid == 0 {
                note(.refused, line: at, "[Child \(child)] makes root a child: root cannot be locked out of anything")
            }
            switch Result(catching: { () throws(Errno) in try UserDatabase.user(named: child) }) {
            case .success(nil): note(.warning, line: at, "[Child \(child)]: no user \(child) is known (NSS)")
            case .failure(let error): note(.warning, line: at, "[Child \(child)]: cannot look up \(child): \(error)")
            case .success(_?):
                if !children.contains(child) && !isChildThroughGroup(child) {
                    note(.warning, line: at, "[Child \(child)] has no effect: \(child) is not listed in Children= (by name or group)")
                }
            }
            for principal in guardians {
                _ = members(of: principal, line: line(section: "Child", argument: child, key: "Guardians", token: principal.description),
                            role: "Guardians=")
            }
        }
        // Guardians: unknown names warned; a child who is also a guardian, of any family, refused.
        var guardians: Set<String> = []
        for family in configuration.allFamilies {
            for principal in family.guardians {
                let at = line(section: "Family", argument: family.sectionArgument, key: "Guardians", token: principal.description)
                guardians.formUnion(members(of: principal, line: at, role: "Guardians="))
            }
        }
        for (_, list) in configuration.childGuardians {
            for principal in list { guardians.formUnion(members(of: principal, line: whole, role: nil)) }
        }
        for both in children.intersection(guardians).sorted() {
            note(.refused, line: line(section: "Family", key: "Guardians"),
                 "\(both) is both a child and a guardian: a child could approve apps for other children")
        }
        for family in configuration.allFamilies where !family.children.isEmpty && family.guardians.isEmpty {
            let uncovered = family.children.filter { principal in
                if case .user(let name) = principal { return configuration.childGuardians[name] == nil }
                return true
            }
            if !uncovered.isEmpty {
                let named = family.sectionArgument.map { "[Family \($0)]" } ?? "[Family]"
                note(.warning, line: line(section: "Family", argument: family.sectionArgument, key: "Children"),
                     "\(named) has no Guardians= for \(uncovered.map(\.description).joined(separator: " ")): "
                        + "only root can approve their apps, unless another family guards them")
            }
        }
    }

    private func isChildThroughGroup(_ name: String) -> Bool {
        guard let account = (try? UserDatabase.user(named: name)) ?? nil else { return false }
        return (try? Family(configuration: configuration).isChild(account)) == true
    }

    /// The users `principal` names (a user, or a group's listed members and
    /// root when the group is root's), warning when NSS knows no such name.
    private mutating func members(of principal: Principal, line: Location, role: String?) -> Set<String> {
        switch principal {
        case .user(let name):
            switch Result(catching: { () throws(Errno) in try UserDatabase.user(named: name) }) {
            case .success(let account?): return account.uid == 0 ? [name, "root"] : [name]
            case .success(nil):
                if let role { note(.warning, line: line, "\(role) names \(name), but no such user is known (NSS)") }
                return [name]
            case .failure(let error):
                if let role { note(.warning, line: line, "\(role) cannot look up \(name): \(error)") }
                return [name]
            }
        case .group(let name):
            switch Result(catching: { () throws(Errno) in try UserDatabase.group(named: name) }) {
            case .success(let group?):
                var names = Set(group.members)
                // An account sharing root's uid (`useradd -o -u 0`) is root, whatever its name.
                if group.gid == 0 || group.members.contains(where: { (try? UserDatabase.user(named: $0))??.uid == 0 }) {
                    names.insert("root")
                }
                return names
            case .success(nil):
                if let role { note(.warning, line: line, "\(role) names @\(name), but no such group is known (NSS)") }
                return []
            case .failure(let error):
                if let role { note(.warning, line: line, "\(role) cannot look up @\(name): \(error)") }
                return []
            }
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Everything `familycontrols.conf` says: who is in the family, where apps
/// live, and how people authenticate.
///
/// Every key is documented in `Config/familycontrols.conf`; an unknown key or
/// section is an error, never silently ignored.
package struct GuardConfiguration: Hashable, Sendable {
    /// The default location, `/etc/familycontrols/familycontrols.conf`.
    package static let defaultPath = "/etc/familycontrols/familycontrols.conf"

    /// `[Family] Guardians=`: who may approve for every child.
    package var guardians: [Principal] = []
    /// `[Family] Children=`: whose apps a guardian must approve.
    package var children: [Principal] = []
    /// `[Family] ApprovedApps=`: apps approved for the children of `[Family]` by the administrator.
    package var approvedApps: [ConfiguredApproval] = []
    /// `[Family NAME]`: further families, each with guardians for its own
    /// children only, in the order the files first name them.
    package var families: [NamedFamily] = []
    /// `[Child NAME] Guardians=`: guardians for one child, replacing every family's.
    package var childGuardians: [String: [Principal]] = [:]
    /// `[Apps] Roots=`: folders whose direct subfolders are app directories;
    /// `%u` is the user's name, `%h` their home.
    package var appRoots: [String] = ["/home/%u/Applications", "/opt/familycontrols/apps/%u"]
    /// `[Authentication] GuardianService=`: the pam.d service guardians authenticate on.
    package var guardianService = "familycontrols-guardian"
    /// `[Authentication] IndividualService=`: the pam.d service individuals authenticate on.
    package var individualService = "familycontrols-individual"
    /// `[Authentication] PromptTimeout=`: how long one prompt waits for an answer.
    package var promptTimeout: Duration = .seconds(60)
    /// `[Authentication] MaxAttempts=`: password attempts per request.
    package var maxAttempts = 3
    /// `[Authentication] FailureDelay=`: after `maxAttempts` failures in a row
    /// (across requests), the wait before the next attempt; zero for none.
    package var failureDelay: Duration = .seconds(30)
    /// `[Authentication] PendingTimeout=`: how long a child's request waits
    /// for a parent or guardian to decide it from their own session.
    package var pendingTimeout: Duration = .seconds(15 * 60)
    /// `[Authentication] GuardianTimeout=`: how long a guardian's successful
    /// authentication covers their later verbs from the same terminal session,
    /// as sudo's `timestamp_timeout`; zero asks every time.
    package var guardianTimeout: Duration = .seconds(5 * 60)
    /// `[Authentication] InSessionApproval=`: what a guardian may do in the
    /// child's own app instead of deciding from their own session; nil when
    /// not set: ``InSessionApproval/code`` once a guardian has enrolled a
    /// one-time code, else ``InSessionApproval/no`` (see familycontrols.conf(5)).
    package var inSessionApprovalSetting: InSessionApproval?
    /// Whether `InSessionApproval=yes`: any guardian PAM stack in the child's
    /// app (what a guardian types there passes through processes the child controls).
    package var inSessionApproval: Bool {
        get { inSessionApprovalSetting == .yes }
        set { inSessionApprovalSetting = newValue ? .yes : .no }
    }
    /// `[Authentication] GuardianCodeService=`: the pam.d service that checks a
    /// guardian's one-time code typed in the child's app.
    package var guardianCodeService = "familycontrols-guardian-code"
    /// `[Authentication] GuardianCodeFile=`: where `familyctl code enroll` keeps
    /// the guardians' one-time-code secrets, the users file the code service's
    /// pam_oath reads (root's alone, 0600).
    package var guardianCodeFile = "/etc/familycontrols/oath/users.oath"
    /// `[Audit] Retention=`: how long audit events are kept; nil keeps them forever.
    package var auditRetention: Duration? = .seconds(365 * 86_400)
    /// `[Locks] VerifyInterval=`: how often the Guard checks and repairs every
    /// lock while it runs (besides at start and `familyctl locks verify`); nil: never.
    package var lockVerifyInterval: Duration? = .seconds(3600)
    /// `[Limits] MostTimeByCode=`: the most more time a parent or guardian's
    /// one-time code, typed at the child's screen, gives at once (0: a code
    /// gives none). A code never lifts or loosens a limit.
    package var mostTimeByCode: Duration = .seconds(1800)
    /// `[Flatpak] UserInstallations=`: whether apps of a user's own Flatpak
    /// installation (`~/.local/share/flatpak`) are recognised.
    package var flatpakUserInstallations = true
    /// `[Flatpak] SystemInstallation=`: whether apps of the system Flatpak
    /// installation (`/var/lib/flatpak`) are recognised.
    package var flatpakSystemInstallation = true
    /// `[Flatpak] Installations=`: further Flatpak installations whose apps
    /// are recognised, treated as the system one: each must be root's.
    package var flatpakInstallations: [String] = []
    /// `[Flatpak] MoveService=`: the socket of the Flatpak move service
    /// (`familycontrols-flatpak.socket`), through which an approved per-user
    /// app is moved into the Guard's installation; used where the socket
    /// exists, else the app is locked in place. Nil (`no`): always in place.
    package var flatpakMoveService: String? = "/run/familycontrols-flatpak/move.socket"
    /// `[Flatpak] GuardInstallation=`: the Guard's own root-owned installation
    /// (its `Path=` in `/etc/flatpak/installations.d/familycontrols.conf`),
    /// whose apps are recognised as a system installation's.
    package var flatpakGuardInstallation = "/var/lib/familycontrols-flatpak"
    /// `[Flatpak] TrustedRemote=`, one a line: the remotes whose new commits
    /// an approved app follows without a guardian. Nil (no such line): Flathub,
    /// where the system installation has it with its keys; empty (`TrustedRemote=none`): none.
    package var flatpakTrustedRemotes: [FlatpakTrustedRemote]?
    /// `[Monitors] Enabled=`: whether the Guard runs the monitors approved
    /// apps declare (`X-FamilyControls-Monitor=`) in their children's sessions.
    package var monitorsEnabled = true
    /// `[Monitors] RestartsPerMinute=`: the most times one monitor is started
    /// again within any minute; past it, it waits until the minute is over.
    package var monitorRestartsPerMinute = 10

    /// `[Updates] TrustedKeys=`: update keys (`ed25519:BASE64`) the
    /// administrator trusts to sign new versions of child apps in app roots,
    /// for every app (``TrustedUpdateKey/appID`` nil) or one (`APPID=ed25519:…`).
    package var trustedUpdateKeys: [TrustedUpdateKey] = []

    /// The embedded defaults: no family yet, standard roots and services.
    package init() {}

    /// Parses the text of a configuration file read from `path`.
    package init(parsing text: String, path: String) throws(ConfigError) {
        try self.init(parsing: [(path: path, text: text)])
    }

    /// Parses the main file and its drop-ins, in order, as one: a later file
    /// adds to the lists earlier ones gave and sets the keys they set again.
    package init(parsing files: [(path: String, text: String)]) throws(ConfigError) {
        // The first Roots= line replaces the embedded defaults; later ones add,
        // even to a list that happens to equal the defaults.
        var rootsGiven = false
        for (path, text) in files {
            let file = try INIFile(parsing: text, path: path)
            for section in file.sections {
                try apply(section, file: path, rootsGiven: &rootsGiven)
            }
        }
    }

    /// Every family, the plain `[Family]` first (named "").
    package var allFamilies: [NamedFamily] {
        [NamedFamily(name: "", guardians: guardians, children: children, approvedApps: approvedApps)] + families
    }


    private mutating func apply(_ section: INIFile.Section, file: String, rootsGiven: inout Bool) throws(ConfigError) {
        func fail(_ line: Int, _ message: String) -> ConfigError { ConfigError(file: file, line: line, message) }
        switch (section.name, section.argument) {
        case ("Family", nil):
            for entry in section.entries {
                switch entry.key {
                case "Guardians": guardians = try Self.principals(entry, current: guardians, file: file)
                case "Children": children = try Self.principals(entry, current: children, file: file)
                case "ApprovedApps": approvedApps = try Self.approvedApps(entry, current: approvedApps, file: file)
                default:
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Family] (expected Guardians, Children or ApprovedApps)")
                }
            }
        case ("Family", let name?):
            guard NamedFamily.isValidName(name) else {
                throw fail(section.line, "\"\(name.clipped)\" in [Family \(name.clipped)] is not a valid family name "
                    + "(letters, digits, . _ -, at most 64)")
            }
            let index: Int
            if let known = families.firstIndex(where: { $0.name == name }) {
                index = known
            } else {
                guard families.count < NamedFamily.limit else { throw fail(section.line, "at most \(NamedFamily.limit) [Family NAME] sections") }
                families.append(NamedFamily(name: name))
                index = families.count - 1
            }
            for entry in section.entries {
                switch entry.key {
                case "Guardians": families[index].guardians = try Self.principals(entry, current: families[index].guardians, file: file)
                case "Children": families[index].children = try Self.principals(entry, current: families[index].children, file: file)
                case "ApprovedApps":
                    families[index].approvedApps = try Self.approvedApps(entry, current: families[index].approvedApps, file: file)
                default:
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Family \(name)] "
                        + "(expected Guardians, Children or ApprovedApps)")
                }
            }
        case ("Child", let name?):
            guard Principal.isValidName(name) else {
                throw fail(section.line, "\"\(name.clipped)\" in [Child \(name.clipped)] is not a valid user name")
            }
            for entry in section.entries {
                guard entry.key == "Guardians" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Child \(name)] (expected Guardians)")
                }
                childGuardians[name] = try Self.principals(entry, current: childGuardians[name] ?? [], file: file)
            }
        case ("Apps", nil):
            for entry in section.entries {
                guard entry.key == "Roots" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Apps] (expected Roots)")
                }
                appRoots = try Self.roots(entry, current: rootsGiven ? appRoots : [], file: file)
                rootsGiven = true
            }
        case ("Authentication", nil):
            for entry in section.entries {
                switch entry.key {
                case "GuardianService": guardianService = try Self.service(entry, file: file)
                case "IndividualService": individualService = try Self.service(entry, file: file)
                case "PromptTimeout": promptTimeout = try Self.duration(entry, file: file)
                case "MaxAttempts":
                    guard let value = Int(entry.value), (1...10).contains(value) else {
                        throw fail(entry.line, "MaxAttempts= expects a whole number from 1 to 10, found \"\(entry.value.clipped)\"")
                    }
                    maxAttempts = value
                case "FailureDelay": failureDelay = try Self.duration(entry, file: file, allowing: 0...3_600_000)
                case "PendingTimeout": pendingTimeout = try Self.duration(entry, file: file, allowing: 10_000...86_400_000)
                case "GuardianTimeout": guardianTimeout = try Self.duration(entry, file: file, allowing: 0...3_600_000)
                case "InSessionApproval": inSessionApprovalSetting = try Self.inSessionApproval(entry, file: file)
                case "GuardianCodeService": guardianCodeService = try Self.service(entry, file: file)
                case "GuardianCodeFile":
                    guard entry.value.hasPrefix("/"), !entry.value.hasSuffix("/"), entry.value.utf8.count < 4096,
                          !entry.value.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == " " }) else {
                        throw fail(entry.line, "GuardianCodeFile= expects an absolute file path, found \"\(entry.value.clipped)\"")
                    }
                    guardianCodeFile = entry.value
                default:
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Authentication] (expected GuardianService, "
                        + "IndividualService, PromptTimeout, MaxAttempts, FailureDelay, PendingTimeout, GuardianTimeout, "
                        + "InSessionApproval, GuardianCodeService or GuardianCodeFile)")
                }
            }
        case ("Audit", nil):
            for entry in section.entries {
                guard entry.key == "Retention" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Audit] (expected Retention)")
                }
                auditRetention = try Self.retention(entry, file: file)
            }
        case ("Locks", nil):
            for entry in section.entries {
                guard entry.key == "VerifyInterval" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Locks] (expected VerifyInterval)")
                }
                lockVerifyInterval = try Self.interval(entry, file: file)
            }
        case ("Limits", nil):
            for entry in section.entries {
                guard entry.key == "MostTimeByCode" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Limits] (expected MostTimeByCode)")
                }
                mostTimeByCode = try Self.duration(entry, file: file, allowing: 0...86_400_000)
            }
        case ("Flatpak", nil):
            for entry in section.entries {
                switch entry.key {
                case "UserInstallations": flatpakUserInstallations = try Self.boolean(entry, file: file)
                case "SystemInstallation": flatpakSystemInstallation = try Self.boolean(entry, file: file)
                case "Installations": flatpakInstallations = try Self.installations(entry, current: flatpakInstallations, file: file)
                case "MoveService":
                    flatpakMoveService = ["no", "off", "false", "0"].contains(entry.value.lowercased())
                        ? nil : try Self.absolutePath(entry, example: "/run/familycontrols-flatpak/move.socket", file: file)
                case "GuardInstallation":
                    flatpakGuardInstallation = try Self.absolutePath(entry, example: "/var/lib/familycontrols-flatpak", file: file)
                case "TrustedRemote":
                    var remotes = flatpakTrustedRemotes ?? []
                    if entry.value != "none" {
                        switch FlatpakTrustedRemote.parse(entry.value) {
                        case .success(let remote):
                            guard !remotes.contains(where: { $0.name == remote.name }) else {
                                throw fail(entry.line, "TrustedRemote= names remote \"\(remote.name)\" twice")
                            }
                            guard remotes.count < FlatpakTrustedRemote.limit else {
                                throw fail(entry.line, "at most \(FlatpakTrustedRemote.limit) TrustedRemote= lines")
                            }
                            remotes.append(remote)
                        case .failure(let error):
                            throw fail(entry.line, "TrustedRemote= \(error) (for example: TrustedRemote=flathub "
                                + "https://dl.flathub.org/repo/ 4C8E F5A3 ...), found \"\(entry.value.clipped)\"")
                        }
                    }
                    flatpakTrustedRemotes = remotes
                default:
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Flatpak] (expected UserInstallations, "
                        + "SystemInstallation, Installations, MoveService, GuardInstallation or TrustedRemote)")
                }
            }
        case ("Monitors", nil):
            for entry in section.entries {
                switch entry.key {
                case "Enabled": monitorsEnabled = try Self.boolean(entry, file: file)
                case "RestartsPerMinute":
                    guard let value = Int(entry.value), (1...600).contains(value) else {
                        throw fail(entry.line, "RestartsPerMinute= expects a whole number from 1 to 600, found \"\(entry.value.clipped)\"")
                    }
                    monitorRestartsPerMinute = value
                default:
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Monitors] (expected Enabled or RestartsPerMinute)")
                }
            }
        case ("Updates", nil):
            for entry in section.entries {
                guard entry.key == "TrustedKeys" else {
                    throw fail(entry.line, "unknown key \"\(entry.key.clipped)\" in [Updates] (expected TrustedKeys)")
                }
                trustedUpdateKeys = try Self.trustedKeys(entry, current: trustedUpdateKeys, file: file)
            }
        case ("Child", nil):
            throw fail(section.line, "[Child] needs a user name: [Child alice]")
        case (let name, let argument?)
            where ["Apps", "Authentication", "Audit", "Locks", "Flatpak", "Monitors", "Updates"].contains(name):
            throw fail(section.line, "[\(name)] takes no argument, found \"\(argument.clipped)\"")
        default:
            throw fail(section.line, "unknown section [\(section.name.clipped)] "
                + "(expected [Family], [Family NAME], [Child NAME], [Apps], [Authentication], [Audit], [Locks], [Limits], [Flatpak], [Monitors] or [Updates])")
        }
    }
}

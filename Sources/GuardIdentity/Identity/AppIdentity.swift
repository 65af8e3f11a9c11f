import SystemKit
import FamilyConfiguration
import LockEngine
import UpdateSignature

/// Which app a process is, as the Guard established it from the kernel and
/// the filesystem, never from what the process said.
package struct AppIdentity: Hashable, Sendable {
    /// The longest display name shown; a longer `Name=` is cut.
    package static let displayNameLimit = 100

    /// The app directory's name, e.g. `org.example.Demo`.
    package var appID: String
    /// The name shown in the alert (`Name=` of the desktop entry, else the
    /// app ID), with control and formatting characters escaped.
    package var displayName: String
    /// The app directory, `ROOT/APPID`.
    package var directory: String
    /// The executable the process runs, inside ``directory``.
    package var executable: String
    /// Which directory object it is: an approval answers this one only.
    package var directoryIdentity: FileIdentity
    /// What kind of app it is: nil for an app in an app root (`ROOT/APPID`);
    /// for a Flatpak app, the deployment it runs from (its ID, installation,
    /// architecture, branch and commit), and then ``directory`` is the
    /// folder ``FlatpakLockPlacement`` names.
    package var flatpak: FlatpakDeployment?
    /// For a Flatpak app, the runtime deployment it runs on (its `/usr`).
    package var flatpakRuntime: FlatpakDeployment?
    /// For an app in an app root, the update key its desktop entry declared
    /// when it was identified (exactly one, well formed): what a guardian
    /// approving it is shown, and what the approval then trusts.
    package var updateKey: UpdateKey?
    /// Its `X-FamilyControls-Version=` when it was identified, sanitized for
    /// display; what a guardian approving it is shown.
    package var version: String?
    /// The monitor its desktop entry declares (`X-FamilyControls-Monitor=`,
    /// as written), and what keeping it down costs the child's sessions
    /// (`X-FamilyControls-MonitorRequired=`): shown to the guardian who decides.
    package var monitor: String?
    package var monitorRequired: SessionConsequence?

    package init(appID: String, displayName: String, directory: String, executable: String,
                 directoryIdentity: FileIdentity, flatpak: FlatpakDeployment? = nil,
                 updateKey: UpdateKey? = nil, version: String? = nil,
                 monitor: String? = nil, monitorRequired: SessionConsequence? = nil) {
        self.updateKey = updateKey
        self.version = version.map { DisplayText.sanitized($0, limit: UpdateVersion.maximumLength) }
        self.appID = appID
        self.displayName = DisplayText.sanitized(displayName, limit: Self.displayNameLimit)
        self.directory = directory
        self.executable = executable
        self.directoryIdentity = directoryIdentity
        self.flatpak = flatpak
        self.monitor = monitor.map { DisplayText.sanitized($0, limit: 200) }
        self.monitorRequired = monitorRequired
    }

    /// Whether `text` is an acceptable app ID: a reverse-domain name made of
    /// letters, digits, `.`, `_` and `-`, with no empty part, at most 255 bytes.
    package static func isValidAppID(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 255,
              !text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
        else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }
}

/// Why a process is not accepted as a managed app; each case carries a
/// message the developer or administrator can act on.
package enum IdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The process ended, or its pid was reused, while being examined.
    case processGone(pid: Int32)
    /// The executable is not inside an app directory under the user's app roots.
    case notInAppDirectory(executable: String, roots: [String])
    /// The app directory has no `APPID.desktop`, or it cannot be read.
    case missingDesktopEntry(path: String)
    /// The desktop entry could not be read (the inspector's words).
    case unreadableDesktopEntry(path: String, String)
    /// The inspector that reads `what` failed: it hung, crashed, or
    /// answered out of its interface.
    case inspectorFailed(what: String, problem: String)
    /// The desktop entry does not declare `X-FamilyControls=true`.
    case missingCapability(path: String)
    /// `Exec=` does not name the running executable.
    case execMismatch(path: String, executable: String)
    /// `X-FamilyControls-MonitorRequired=` is neither `lock` nor `end`, or
    /// is given without a monitor.
    case invalidMonitorRequirement(path: String, MonitorRequirementError)
    /// The app directory's name is not an acceptable app ID.
    case invalidAppID(String)
    /// The process is being traced, so its behaviour is not the app's own.
    case traced(pid: Int32)
    /// The process runs with a library preloaded or a library path overridden.
    case injectedLibraries(variable: String)
    /// The process runs in a user namespace other than the Guard's, where
    /// the paths it sees may be mounts of its own.
    case foreignNamespace(pid: Int32)
    /// The process runs code that is not the app's nor root's.
    case foreignCode(pid: Int32, String)
    /// The process runs in a user namespace of its own and is no Flatpak
    /// app whose `.flatpak-info` the Guard can read.
    case notFlatpak(pid: Int32, FlatpakIdentityError)
    /// The process claims to be a Flatpak app, and the files disagree.
    case flatpak(pid: Int32, FlatpakIdentityError)
    /// The app is deployed in a Flatpak installation `familycontrols.conf` turned off.
    case flatpakInstallationOff(path: String, key: String)
    /// The app directory cannot be used as one.
    case directoryUnusable(path: String, String)
    /// What the Guard decides from could not be read of a live process (a
    /// Guard without `CAP_DAC_READ_SEARCH`, say).
    case notExaminable(pid: Int32, String)

    package var description: String {
        switch self {
        case .processGone(let pid):
            "process \(pid) exited before it could be identified"
        case .notInAppDirectory(let executable, let roots):
            "\(DisplayText.sanitized(executable)) is not in a managed app directory, or is not the file there "
                + "(expected ROOT/APPID/… under \(roots.joined(separator: " or ")))"
        case .missingDesktopEntry(let path):
            "the app has no desktop entry at \(path)"
        case .inspectorFailed(let what, let problem):
            "\(what) could not be read: \(DisplayText.sanitized(problem))"
        case .unreadableDesktopEntry(let path, let problem):
            "the app's desktop entry \(path) cannot be read: \(DisplayText.sanitized(problem))"
        case .missingCapability(let path):
            "\(path) does not declare the Family Controls capability (add X-FamilyControls=true to [Desktop Entry])"
        case .execMismatch(let path, let executable):
            "Exec= in \(path) does not name the running program \(DisplayText.sanitized(executable)) (name the program file itself, not a link)"
        case .invalidMonitorRequirement(let path, let error):
            "\(error) in \(path) (write lock or end, beside X-FamilyControls-Monitor=)"
        case .invalidAppID(let id):
            "\"\(id.clipped)\" is not a valid app ID (letters, digits, . _ -)"
        case .traced(let pid):
            "process \(pid) is being traced, so it is not trusted as the app"
        case .injectedLibraries(let variable):
            "the process runs with \(variable) set, so it is not trusted as the app"
        case .foreignNamespace(let pid):
            "process \(pid) runs in a user namespace of its own, where its files may be mounts it made; it is not trusted as the app"
        case .foreignCode(let pid, let problem):
            "process \(pid) is not trusted as the app: \(problem)"
        case .notFlatpak(let pid, let problem):
            "process \(pid) runs in a user namespace of its own, where its files may be mounts it made, "
                + "and is not a Flatpak app (\(problem)); it is not trusted as the app"
        case .flatpak(let pid, let problem):
            "process \(pid) is not trusted as the Flatpak app it claims to be: \(problem)"
        case .flatpakInstallationOff(let path, let key):
            "the app is installed in the Flatpak installation \(DisplayText.sanitized(path)), which familycontrols.conf "
                + "turns off ([Flatpak] \(key)=no)"
        case .directoryUnusable(let path, let problem):
            "\(DisplayText.sanitized(path)) cannot be an app directory: \(problem)"
        case .notExaminable(let pid, let problem):
            "process \(pid) could not be examined (\(problem)), so it is not trusted as the app"
        }
    }
}

extension IdentityError {
    /// Whether the inspector failed rather than the process: worth an audit
    /// row, as a file made to break it may be.
    package var isInspectorFailure: Bool {
        switch self {
        case .inspectorFailed, .flatpak(_, .inspectorFailed), .notFlatpak(_, .inspectorFailed): true
        default: false
        }
    }
}

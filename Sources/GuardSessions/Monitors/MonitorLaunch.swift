#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import LockEngine
import SystemKit
import GuardFlatpak
import GuardIdentity
import GuardStore

/// How one approved app's monitor is started: the program to execute, its
/// whole `argv`, and the folder it starts in. Read from the approved app's
/// own desktop entry, inside its locked folder, found by the folder's
/// identity (device and inode), not by the path recorded at approval.
struct MonitorLaunch: Hashable, Sendable {
    var appID: String
    /// The app's name, from its desktop entry.
    var appName: String
    /// What `argv[0]` names, and the log: the program's path as last seen.
    var path: String
    var arguments: [String]
    var directory: String?
    /// The approved folder (an app root's app), whose own program is run by
    /// descriptor (``program``, relative to it): nil for a Flatpak app.
    var folder: FileIdentity?
    var program: String?
    /// What keeping it down costs the child's sessions
    /// (`X-FamilyControls-MonitorRequired=`); nil when it is not required.
    var required: SessionConsequence?
    /// A Flatpak app's monitor, started through `flatpak run`: the approved
    /// deployment it must run (checked before and after the start). Its
    /// sandbox's user namespace is the child's, so secure execution would
    /// guard nothing there (and GLib's bus lookup refuses to run under it).
    var sandbox: FlatpakMonitorSandbox?

    var isFlatpak: Bool { sandbox != nil }

    /// The monitor `record` declares: nil when its desktop entry declares
    /// none. `folder` is the approved folder, held open (nil for a Flatpak app).
    /// - Throws: ``MonitorLaunchError`` when it declares one that cannot be run.
    static func of(_ record: AuthorizationRecord, folder: OpenedDirectory?, configuration: GuardConfiguration,
                   logger: Logger? = nil) throws(MonitorLaunchError) -> MonitorLaunch? {
        if let deployment = record.flatpak {
            return try flatpak(record, deployment, configuration: configuration, logger: logger)
        }
        guard let folder else { throw .folderMissing(record.appPath) }
        guard let (entry, command) = try declared(in: folder, path: folder.path, record.appID) else { return nil }
        try check(command.program, in: folder)
        let path = record.appPath + "/" + command.program
        return MonitorLaunch(appID: record.appID, appName: entry.name ?? record.appID, path: path,
                             arguments: [path] + command.arguments, directory: record.appPath, folder: folder.identity,
                             program: command.program, required: required(entry, record, logger), sandbox: nil)
    }

    /// What the entry declares of a required monitor. The value was checked
    /// when the app asked; one that is not `lock` or `end` now (an app
    /// approved before the key was known) is logged and ignored.
    private static func required(_ entry: DesktopEntry, _ record: AuthorizationRecord, _ logger: Logger?) -> SessionConsequence? {
        do throws(MonitorRequirementError) {
            return try MonitorRequirement.declared(in: entry)
        } catch {
            logger?.warning("monitor: \(record.appID) for \(record.user): \(error); its monitor is not taken as required")
            return nil
        }
    }

    /// The desktop entry `APPID.desktop` in `folder` and the monitor it
    /// declares; nil when it declares none.
    private static func declared(in folder: OpenedDirectory, path: String,
                                 _ appID: String) throws(MonitorLaunchError) -> (DesktopEntry, MonitorCommand)? {
        let found: DesktopEntry?
        do throws(InspectionFailure) {
            found = try AppIdentifier.desktopEntry(folder, "\(appID).desktop")
        } catch {
            throw .inspectorFailed(error.description)
        }
        guard let entry = found else { throw .unreadableEntry("\(path)/\(appID).desktop") }
        guard let value = entry.monitor else { return nil }
        do throws(MonitorCommandError) {
            return (entry, try MonitorCommand(parsing: value))
        } catch {
            throw .invalid(error)
        }
    }

    /// `program` inside `folder`, opened without following a link: a
    /// regular file someone may execute.
    static func check(_ program: String, in folder: OpenedDirectory) throws(MonitorLaunchError) {
        guard let opened = folder.openProgram(program), let status = try? opened.status() else {
            throw .missingProgram(program)
        }
        guard status.mode & UInt32(S_IFMT) == UInt32(S_IFREG) else { throw .missingProgram(program) }
        guard status.mode & 0o111 != 0 else { throw .notExecutable(program) }
    }

    private static func flatpak(_ record: AuthorizationRecord, _ deployment: FlatpakDeployment,
                                configuration: GuardConfiguration, logger: Logger?) throws(MonitorLaunchError) -> MonitorLaunch? {
        let applications = deployment.filesPath + "/share/applications"
        guard let opened = try? OpenedDirectory.open(applications) else { throw .unreadableEntry("\(applications)/\(deployment.appID).desktop") }
        guard let (entry, command) = try declared(in: opened, path: applications, deployment.appID) else {
            return nil
        }
        // The program is checked where the sandbox will find it, as /app/PROGRAM.
        guard let files = try? OpenedDirectory.open(deployment.filesPath) else { throw .missingProgram(command.program) }
        try check(command.program, in: files)
        let installation: String
        switch deployment.installation.kind {
        case .user: installation = "--user"
        case .system where deployment.installation.path == FlatpakInstallation.system.path: installation = "--system"
        case .system where deployment.installation.path == configuration.flatpakGuardInstallation:
            installation = "--installation=\(GuardFlatpakInstallation.name)"
        case .system: throw .unnamedInstallation(deployment.installation.path)
        }
        let candidates: [String] = ["/usr/bin/flatpak", "/usr/local/bin/flatpak"]
        guard let flatpak = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw .noFlatpak
        }
        let arguments = [flatpak, "run", installation, "--command=/app/\(command.program)", "--arch=\(deployment.arch)",
                         "--branch=\(deployment.branch)", "--commit=\(deployment.commit)", deployment.appID]
            + command.arguments
        return MonitorLaunch(appID: record.appID, appName: entry.name ?? record.appID, path: flatpak,
                             arguments: arguments, directory: nil, folder: nil, program: nil,
                             required: required(entry, record, logger),
                             sandbox: FlatpakMonitorSandbox(folderPath: FlatpakLockPlacement.folder(of: deployment),
                                                            folder: record.appIdentity, deployment: deployment))
    }
}

/// Why an approved app's monitor cannot be run.
enum MonitorLaunchError: Error, Equatable, CustomStringConvertible {
    case unreadableEntry(String)
    /// The inspector could not read the desktop entry (it could not start, hung, crashed…).
    case inspectorFailed(String)
    case folderMissing(String)
    case invalid(MonitorCommandError)
    case missingProgram(String)
    case notExecutable(String)
    case unnamedInstallation(String)
    case noFlatpak

    var description: String {
        switch self {
        case .unreadableEntry(let path): "its desktop entry \(DisplayText.sanitized(path).clipped) cannot be read"
        case .inspectorFailed(let problem): "its desktop entry could not be read: \(DisplayText.sanitized(problem).clipped)"
        case .folderMissing(let path):
            "its approved folder (last at \(DisplayText.sanitized(path).clipped)) is not where it was approved, nor found by its identity"
        case .invalid(let error): "X-FamilyControls-Monitor= is not a monitor command: \(error)"
        case .missingProgram(let program): "its monitor program \(DisplayText.sanitized(program).clipped) is not a file in the app's folder (a link is not followed)"
        case .notExecutable(let program): "its monitor program \(DisplayText.sanitized(program).clipped) is not executable"
        case .unnamedInstallation(let path):
            "its Flatpak installation \(DisplayText.sanitized(path).clipped) has no name `flatpak run --installation=` knows"
        case .noFlatpak: "it is a Flatpak app and flatpak is not installed"
        }
    }
}

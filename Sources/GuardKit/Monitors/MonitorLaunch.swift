#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import LockEngine
import SystemKit

/// How one approved app's monitor is started: the program to execute, its
/// whole `argv`, and the folder it starts in. Read from the approved app's
/// own desktop entry, inside its locked folder.
struct MonitorLaunch: Hashable, Sendable {
    var appID: String
    /// The app's name, from its desktop entry.
    var appName: String
    var path: String
    var arguments: [String]
    var directory: String?
    /// A Flatpak app's monitor, started through `flatpak run`: its sandbox's
    /// user namespace is the child's, so secure execution would guard
    /// nothing there (and GLib's bus lookup refuses to run under it).
    var isFlatpak: Bool

    /// The monitor `record` declares: nil when its desktop entry declares
    /// none.
    /// - Throws: ``MonitorLaunchError`` when it declares one that cannot be run.
    static func of(_ record: AuthorizationRecord, configuration: GuardConfiguration) throws(MonitorLaunchError) -> MonitorLaunch? {
        if let deployment = record.flatpak {
            return try flatpak(record, deployment, configuration: configuration)
        }
        let folder = record.appPath
        guard let (entry, command) = try declared(in: folder, record.appID) else { return nil }
        let program = try resolve(command.program, in: folder)
        return MonitorLaunch(appID: record.appID, appName: entry.name ?? record.appID, path: program,
                             arguments: [program] + command.arguments, directory: folder, isFlatpak: false)
    }

    /// The desktop entry `APPID.desktop` in `folder` and the monitor it
    /// declares; nil when it declares none.
    private static func declared(in folder: String, _ appID: String) throws(MonitorLaunchError) -> (DesktopEntry, MonitorCommand)? {
        guard let directory = try? OpenedDirectory.open(folder),
              let text = AppIdentifier.readDesktopEntry(directory, "\(appID).desktop") else {
            throw .unreadableEntry("\(folder)/\(appID).desktop")
        }
        let entry = DesktopEntry(parsing: text)
        guard let value = entry.monitor else { return nil }
        do throws(MonitorCommandError) {
            return (entry, try MonitorCommand(parsing: value))
        } catch {
            throw .invalid(error)
        }
    }

    /// `program` inside `folder`, followed through links only as far as it
    /// stays inside: a regular file someone may execute.
    private static func resolve(_ program: String, in folder: String) throws(MonitorLaunchError) -> String {
        guard let base = realpath(folder, nil) else { throw .missingProgram(program) }
        defer { free(base) }
        guard let found = realpath(folder + "/" + program, nil) else { throw .missingProgram(program) }
        defer { free(found) }
        let root = String(cString: base), path = String(cString: found)
        guard path.hasPrefix(root + "/") else { throw .programOutsideTheApp(program) }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .missingProgram(program) }
        guard info.st_mode & 0o111 != 0 else { throw .notExecutable(program) }
        return path
    }

    private static func flatpak(_ record: AuthorizationRecord, _ deployment: FlatpakDeployment,
                                configuration: GuardConfiguration) throws(MonitorLaunchError) -> MonitorLaunch? {
        guard let (entry, command) = try declared(in: deployment.filesPath + "/share/applications", deployment.appID) else {
            return nil
        }
        // The program is checked where the sandbox will find it, as /app/PROGRAM.
        _ = try resolve(command.program, in: deployment.filesPath)
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
                             arguments: arguments, directory: nil, isFlatpak: true)
    }
}

/// Why an approved app's monitor cannot be run.
enum MonitorLaunchError: Error, Equatable, CustomStringConvertible {
    case unreadableEntry(String)
    case invalid(MonitorCommandError)
    case missingProgram(String)
    case programOutsideTheApp(String)
    case notExecutable(String)
    case unnamedInstallation(String)
    case noFlatpak

    var description: String {
        switch self {
        case .unreadableEntry(let path): "its desktop entry \(DisplayText.sanitized(path).clipped) cannot be read"
        case .invalid(let error): "X-FamilyControls-Monitor= is not a monitor command: \(error)"
        case .missingProgram(let program): "its monitor program \(DisplayText.sanitized(program).clipped) is not a file in the app's folder"
        case .programOutsideTheApp(let program):
            "its monitor program \(DisplayText.sanitized(program).clipped) leads outside the app's folder"
        case .notExecutable(let program): "its monitor program \(DisplayText.sanitized(program).clipped) is not executable"
        case .unnamedInstallation(let path):
            "its Flatpak installation \(DisplayText.sanitized(path).clipped) has no name `flatpak run --installation=` knows"
        case .noFlatpak: "it is a Flatpak app and flatpak is not installed"
        }
    }
}

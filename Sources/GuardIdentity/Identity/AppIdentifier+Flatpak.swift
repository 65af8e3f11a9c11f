#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import LockEngine

extension AppIdentifier {
    /// Identifies a process in a user namespace of its own as the Flatpak
    /// app its `.flatpak-info` names, believing none of it until the files
    /// agree (ARCHITECTURE.md, "Identity: Flatpak apps"): the deployment
    /// `app-path` names, in one of `flatpak`'s installations, holds the very
    /// file the process runs (device and inode) and declares the capability
    /// in its own desktop file; every executable mapping is a file of that
    /// deployment, of the runtime deployment `runtime-path` names, or root's.
    /// - Returns: the app, and the folder an approval locks
    ///   (``FlatpakLockPlacement``), held open.
    func identifySandboxed(proc: FileDescriptor, pid: Int32, uid: UInt32, executable: String, running: FileIdentity,
                           flatpak: FlatpakInstallations) throws(IdentityError) -> (AppIdentity, OpenedDirectory) {
        let info: FlatpakInfo
        do {
            info = try FlatpakSandbox(proc: proc, inspector: inspector).info(owner: uid)
        } catch {
            throw .notFlatpak(pid: pid, error)
        }
        if let off = flatpak.turnedOff(holding: info.appPath) {
            throw .flatpakInstallationOff(path: off.installation.path, key: off.key)
        }
        let deployment: FlatpakDeployment
        let appFiles: OpenedDirectory
        let runtimeFiles: OpenedDirectory?
        var runtimeDeployment: FlatpakDeployment?
        do throws(FlatpakIdentityError) {
            deployment = try FlatpakSandbox.deployment(of: info, in: flatpak.recognised, executable: executable,
                                                       running: running)
            appFiles = try FlatpakSandbox.files(of: deployment)
            // The runtime is only code: it may be installed anywhere, recognised or
            // not, but it must be the app's own (FlatpakSandbox+Runtime).
            let everywhere = flatpak.recognised + flatpak.turnedOff.map(\.installation)
            if info.runtimePath == nil {
                runtimeFiles = nil
            } else {
                let runtime = try FlatpakDeployment.runtime(namedBy: info, in: everywhere)
                if let problem = FlatpakSandbox.runtimeProblem(runtime, of: deployment) {
                    throw FlatpakIdentityError.runtimeNotTheApps(problem)
                }
                runtimeFiles = try FlatpakSandbox.files(of: runtime)
                runtimeDeployment = runtime
            }
        } catch {
            throw .flatpak(pid: pid, error)
        }
        // The file checked in `deployment(of:)` is still the one under the folder held open.
        guard let inside = FlatpakDeployment.pathInsideApp(executable), let file = appFiles.status(of: inside),
              FileIdentity(file) == running else {
            throw .flatpak(pid: pid, .executableNotInDeployment(executable: executable, deployment: deployment.path))
        }

        let entryPath = "\(deployment.filesPath)/share/applications/\(deployment.appID).desktop"
        guard let applications = try? OpenedDirectory.open(deployment.filesPath + "/share/applications") else {
            throw .missingDesktopEntry(path: entryPath)
        }
        let entry = try inspectedEntry(applications, deployment.appID, path: entryPath)
        guard entry.declaresFamilyControls else { throw .missingCapability(path: entryPath) }
        let required: SessionConsequence?
        do throws(MonitorRequirementError) {
            required = try MonitorRequirement.declared(in: entry)
        } catch {
            throw .invalidMonitorRequirement(path: entryPath, error)
        }

        let folderPath = FlatpakLockPlacement.folder(of: deployment)
        let folder: OpenedDirectory
        do {
            folder = try OpenedDirectory.open(folderPath)
        } catch {
            throw .directoryUnusable(path: folderPath, "\(error)")
        }
        if let problem = FlatpakSandbox.ownershipProblem(folder.status, of: deployment.installation) {
            throw .directoryUnusable(path: folderPath, problem)
        }
        let places = [MappedCode.Place(prefix: "/app/", directory: appFiles)]
            + (runtimeFiles.map { [MappedCode.Place(prefix: "/usr/", directory: $0)] } ?? [])
        if let problem = try MappedCode(proc: proc, pid: pid, inspector: inspector).examined(executable: running, places: places, sandboxed: true) {
            throw .foreignCode(pid: pid, problem)
        }
        var identity = AppIdentity(appID: deployment.appID, displayName: entry.name ?? deployment.appID,
                                   directory: folderPath, executable: deployment.filesPath + "/" + inside,
                                   directoryIdentity: folder.identity, flatpak: deployment,
                                   monitor: entry.monitor, monitorRequired: required)
        identity.flatpakRuntime = runtimeDeployment
        return (identity, folder)
    }
}

extension FlatpakSandbox {
    /// The `files` folder of `deployment`, opened from the host's side one
    /// component at a time without a link, and its installation's owner's,
    /// closed to other writers, as the installation itself.
    static func files(of deployment: FlatpakDeployment) throws(FlatpakIdentityError) -> OpenedDirectory {
        // The installation is checked as the deployment's files are.
        _ = try open(deployment.installation)
        let files: OpenedDirectory
        do {
            files = try OpenedDirectory.open(deployment.filesPath)
        } catch {
            throw .deploymentUnusable(path: deployment.filesPath, "\(error)")
        }
        if let problem = ownershipProblem(files.status, of: deployment.installation) {
            throw .deploymentUnusable(path: deployment.filesPath, problem)
        }
        return files
    }
}

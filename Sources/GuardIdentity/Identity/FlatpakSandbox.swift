#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import LockEngine

/// Reads a sandboxed process's Flatpak identity the way only the kernel
/// can give it: `.flatpak-info` through the process's own root, never a path
/// string, and the deployment it names from the host's side, never through
/// a link, with the executable checked to be the very file (device and
/// inode) at its path in that deployment's `files`.
///
/// Everything here is a claim a child can make by running bubblewrap with a
/// `.flatpak-info` of their own; what makes it an identity is the executable
/// check (ARCHITECTURE.md, "Identity: Flatpak apps").
package struct FlatpakSandbox {
    /// `/proc/PID` of the pinned process (a folder standing in for it in tests).
    let proc: FileDescriptor
    /// What reads `.flatpak-info`.
    var inspector: Inspector = .standard

    /// `.flatpak-info` at the root of the process's filesystem: opened
    /// relative to `/proc/PID/root`, without following a link, without
    /// waiting on a FIFO, and only when it is a regular file of at most
    /// ``infoLimit`` bytes belonging to `owner`, the user the
    /// process runs as (Flatpak writes it as them): in a sandbox of their
    /// own a child can mount there a file they may not read, which the Guard
    /// must not read for them.
    func info(owner: UInt32) throws(FlatpakIdentityError) -> FlatpakInfo {
        let name = FileName(".flatpak-info")
        let root: FileDescriptor
        let expected: FileStatus
        let file: FileDescriptor
        let opened: FileStatus
        do {
            // `root` is a magic link: following it is the point.
            root = try proc.openChild(FileName("root"), flags: O_RDONLY | O_DIRECTORY)
            expected = try root.status(of: name)
        } catch {
            throw .infoUnreadable("\(error)")
        }
        guard expected.type == .regular else { throw .infoUnreadable("it is not a regular file") }
        guard expected.uid == owner else { throw .infoUnreadable("it belongs to uid \(expected.uid), not to uid \(owner)") }
        do {
            file = try root.openChild(name, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
            opened = try file.status()
        } catch {
            throw .infoUnreadable("\(error)")
        }
        guard opened.type == .regular, opened.isSameFile(as: expected) else {
            throw .infoUnreadable("it was replaced while being opened")
        }
        guard let size = try? file.byteCount(), size <= Self.infoLimit else {
            throw .infoUnreadable("it is larger than \(Self.infoLimit) bytes")
        }
        do throws(InspectionFailure) {
            return try inspector.flatpakInfo(file)
        } catch {
            switch error {
            case .refused(let problem): throw .info(problem)
            case .failed(let problem): throw .inspectorFailed(problem)
            }
        }
    }

    /// The largest `.flatpak-info` read; Flatpak's own are a few KiB.
    static let infoLimit = 64 << 10

    /// The deployment `info` names in one of `installations`, checked from
    /// the host's side: the installation and the deployment's `files` are
    /// folders of the installation's owner that nobody else may write, reached
    /// without a link, and `executable` (as the sandbox names it, under
    /// `/app`) is the file `running` at its path in `files`.
    static func deployment(of info: FlatpakInfo, in installations: [FlatpakInstallation],
                           executable: String, running: FileIdentity) throws(FlatpakIdentityError) -> FlatpakDeployment {
        let deployment = try FlatpakDeployment.named(by: info, in: installations)
        guard !executable.hasSuffix(" (deleted)"), let inside = FlatpakDeployment.pathInsideApp(executable) else {
            throw .executableNotInDeployment(executable: executable, deployment: deployment.path)
        }
        let installation = try Self.open(deployment.installation)
        let files = deployment.relativePath + "/files"
        guard let filesStatus = installation.status(of: files), filesStatus.type == .directory else {
            throw .deploymentUnusable(path: deployment.filesPath, "it is not a folder reached without a link")
        }
        if let problem = ownershipProblem(filesStatus, of: deployment.installation) {
            throw .deploymentUnusable(path: deployment.filesPath, problem)
        }
        guard let file = installation.status(of: files + "/" + inside), file.type == .regular,
              FileIdentity(file) == running else {
            throw .executableNotInDeployment(executable: executable, deployment: deployment.path)
        }
        return deployment
    }

    /// Why a folder of `installation` is not to be trusted, or nil: it is
    /// not its owner's, or others may write to it (for the system one, its
    /// group too).
    /// The installation's folder, opened, when its owner is the installation's.
    static func open(_ installation: FlatpakInstallation) throws(FlatpakIdentityError) -> OpenedDirectory {
        let folder: OpenedDirectory
        do {
            folder = try OpenedDirectory.open(installation.path)
        } catch {
            throw .deploymentUnusable(path: installation.path, "\(error)")
        }
        if let problem = ownershipProblem(folder.status, of: installation) {
            throw .deploymentUnusable(path: installation.path, problem)
        }
        return folder
    }

    package static func ownershipProblem(_ status: FileStatus, of installation: FlatpakInstallation) -> String? {
        let owner = installation.owner
        if status.uid != owner { return "it belongs to uid \(status.uid), not to uid \(owner)" }
        let forbidden: UInt32 = installation.kind == .system ? 0o022 : 0o002
        if status.permissions & forbidden != 0 { return "others may write to it (mode \(String(status.permissions, radix: 8)))" }
        return nil
    }
}

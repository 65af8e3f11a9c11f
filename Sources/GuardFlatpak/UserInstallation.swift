#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import GuardProtocol
import LockEngine
import SystemKit
import GuardIdentity

/// A child's per-user Flatpak installation, `~/.local/share/flatpak`,
/// reached as root without following a link below the home, every folder
/// checked to be the child's: the child owns all of it and may race the
/// Guard, so everything read here is hostile input, and the one change
/// made (setting the app aside) is a `renameat(2)` between folders opened
/// by descriptor.
package struct UserInstallation {
    let uid: UInt32
    let root: FileDescriptor

    init(home: String, uid: UInt32) throws(FlatpakMoveError) {
        self.uid = uid
        do {
            var folder = try FileDescriptor.open(home, O_RDONLY | O_DIRECTORY)
            guard try folder.status().uid == uid else { throw FlatpakMoveError.deployment("the home is not the child's") }
            for component in [".local", "share", "flatpak"] {
                folder = try folder.openChild(FileName(component), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                guard try folder.status().uid == uid else { throw FlatpakMoveError.deployment("~/.local/share/flatpak is not the child's") }
            }
            root = folder
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .deployment("~/.local/share/flatpak: \(error)")
        }
    }

    private func open(_ components: [String]) throws(Errno) -> FileDescriptor {
        var folder = root
        for component in components {
            folder = try folder.openChild(FileName(component), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        }
        return folder
    }

    /// `app/ID/ARCH/BRANCH`, whose `COMMIT` must be the very folder the Guard opened.
    func branchFolder(_ request: FlatpakMoveRequest) throws(FlatpakMoveError) -> FileDescriptor {
        do {
            let branch = try open(["app", request.appID, request.arch, request.branch])
            let deployment = try branch.status(of: FileName(request.commit))
            guard deployment.isSameFile(as: request.deployment) else {
                throw FlatpakMoveError.deployment("the deployment of \(request.commit) is not the folder the Guard identified")
            }
            return branch
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .deployment("app/\(request.appID)/\(request.arch)/\(request.branch)/\(request.commit): \(error)")
        }
    }

    /// Whether the app's branch is still deployed here (its `active` link there).
    func hasDeployment(_ journal: MoveJournal) throws(Errno) -> Bool {
        do {
            _ = try open(["app", journal.appID, journal.arch, journal.branch]).status(of: FileName("active"))
            return true
        } catch {
            if error.rawValue == ENOENT { return false }
            throw error
        }
    }

    /// The remote the deployment came from: `origin`, the first member of
    /// its `deploy` file (a GVariant `(ssasta{sv})`).
    func origin(of request: FlatpakMoveRequest, in branch: FileDescriptor) throws(FlatpakMoveError) -> String {
        let bytes: [UInt8]
        do {
            let deployment = try branch.openChild(FileName(request.commit), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            guard try deployment.status().isSameFile(as: request.deployment) else {
                throw FlatpakMoveError.deployment("the deployment changed while it was read")
            }
            bytes = try deployment.openChild(FileName("deploy"), flags: O_RDONLY | O_NOFOLLOW).readAll(limit: 1 << 20)
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .deployment("its deploy file: \(error)")
        }
        let name: String
        do throws(InspectionFailure) {
            name = try Inspector.standard.call(Inspect.ReadDeploymentOrigin.self, bytes: bytes).origin
        } catch {
            throw .deployment("\(error)")
        }
        guard FlatpakRemoteConfiguration.isRemoteName(name) else { throw .remoteRefused("the deployment's origin is not a plain remote name") }
        return name
    }

    /// `repo/config`, at most ``FlatpakRemoteConfiguration/sizeLimit`` bytes.
    func repositoryConfiguration() throws(FlatpakMoveError) -> [UInt8] {
        do {
            let file = try open(["repo"]).openChild(FileName("config"), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            guard try file.status().type == .regular else { throw FlatpakMoveError.remoteRefused("repo/config is not a regular file") }
            return try file.readAll(limit: FlatpakRemoteConfiguration.sizeLimit + 1)
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .remoteRefused("repo/config: \(error)")
        }
    }

    /// `repo/REMOTE.trustedkeys.gpg`: the keys the child's remote checks
    /// signatures with, which the Guard's copy of the remote then checks with.
    func keyring(of remote: String) throws(FlatpakMoveError) -> [UInt8] {
        do {
            let file = try open(["repo"]).openChild(FileName("\(remote).trustedkeys.gpg"), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            guard try file.status().type == .regular else { throw FlatpakMoveError.remoteRefused("the remote's keyring is not a regular file") }
            return try file.readAll(limit: 1 << 20)
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .remoteRefused("the remote verifies GPG signatures, and its keyring: \(error)")
        }
    }

    /// Moves the child's per-user copy of `runtime` (`runtime/ID/ARCH/BRANCH`,
    /// when there is one) into `.removed/` as ``setAside(_:branchFolder:)``
    /// does the app: Flatpak runs an app on a per-user runtime of its ref
    /// before a root-owned one, and a moved app is itself only on the
    /// latter. The child's own apps of that runtime then run on the Guard's copy.
    func setAsideRuntime(_ runtime: String) throws(FlatpakMoveError) {
        guard let parts = FlatpakRuntimePin.parts(of: runtime) else {
            throw .deployment("\(runtime) is not a runtime ID/ARCH/BRANCH")
        }
        do {
            let arch: FileDescriptor
            do {
                arch = try open(["runtime", parts.id, parts.arch])
                _ = try arch.status(of: FileName(parts.branch))
            } catch let error where error.rawValue == ENOENT {
                return
            }
            let removed = try removedFolder()
            let name = "\(parts.id)-\(parts.branch)-runtime-familycontrols-\(getpid())"
            _ = try retryingOnInterrupt("renameat") { renameat(arch.rawValue, parts.branch, removed.rawValue, name) }
        } catch {
            throw .deployment("setting the per-user copy of runtime \(runtime) aside: \(error)")
        }
    }

    /// `.removed/`, made the child's when it is not there yet.
    private func removedFolder() throws(Errno) -> FileDescriptor {
        if (try? root.status(of: FileName(".removed"))) == nil {
            _ = try retryingOnInterrupt("mkdirat") { mkdirat(root.rawValue, ".removed", 0o755) }
            try root.changeOwner(of: FileName(".removed"), uid: uid, gid: nil)
        }
        let removed = try root.openChild(FileName(".removed"), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        guard try removed.status().uid == uid else { throw Errno(EPERM, operation: ".removed is not the child's") }
        return removed
    }

    /// Moves `app/ID/ARCH/BRANCH` into `.removed/`, Flatpak's own folder
    /// for what it deletes later: from then on the child's Flatpak finds
    /// the app in the Guard's installation only. One `renameat(2)`.
    func setAside(_ request: FlatpakMoveRequest, branchFolder: FileDescriptor) throws(FlatpakMoveError) {
        do {
            let arch = try open(["app", request.appID, request.arch])
            let removed = try removedFolder()
            // The branch folder must still be the one checked: renamed by name, compared after by inode.
            let name = "\(request.appID)-\(request.branch)-\(request.commit)-familycontrols-\(getpid())"
            _ = try retryingOnInterrupt("renameat") { renameat(arch.rawValue, request.branch, removed.rawValue, name) }
            guard try removed.status(of: FileName(name)).isSameFile(as: try branchFolder.status()) else {
                throw FlatpakMoveError.deployment("the branch folder was replaced during the move")
            }
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .deployment("setting the per-user copy aside: \(error)")
        }
    }
}

extension UserInstallation {
    /// What a guardian is shown of where a child's per-user app comes from:
    /// its commit, and its remote's name, URL and key fingerprints as the
    /// child configured them, and whether the site trusts that remote
    /// (``FlatpakTrust/describe(remote:url:fingerprints:trusted:)``); what
    /// cannot be read is said as such.
    package static func source(of deployment: FlatpakDeployment, trusted: [FlatpakTrustedRemote]) -> String? {
        let suffix = "/.local/share/flatpak"
        guard deployment.kind == .app, case .user(let uid) = deployment.installation.kind,
              deployment.installation.path.hasSuffix(suffix) else { return nil }
        let commit = "commit \(deployment.commit.prefix(16))"
        do throws(FlatpakMoveError) {
            let user = try UserInstallation(home: String(deployment.installation.path.dropLast(suffix.count)), uid: uid)
            let opened: OpenedDirectory
            do {
                opened = try OpenedDirectory.open(deployment.path)
            } catch {
                throw .deployment("\(error)")
            }
            let request = FlatpakMoveRequest(uid: uid, home: "", appID: deployment.appID, arch: deployment.arch,
                                             branch: deployment.branch, commit: deployment.commit, deployment: opened.status)
            let origin = try user.origin(of: request, in: try user.branchFolder(request))
            let remote = try FlatpakRemoteConfiguration.remote(origin, in: try user.repositoryConfiguration())
            let keys = remote.gpgVerify ? try OpenPGPKeyring(inspecting: try user.keyring(of: origin)).fingerprints : []
            return "\(commit) of " + FlatpakTrust.describe(remote: remote.name, url: remote.url, fingerprints: keys, trusted: trusted)
        } catch {
            return "\(commit); its remote cannot be read (\(error)): each new commit needs a guardian"
        }
    }
}

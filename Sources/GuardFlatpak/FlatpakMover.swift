#if canImport(Glibc)
import FlatpakNames
import Glibc
#endif
import FamilyConfiguration
import SystemKit
import GuardIdentity

/// An approved per-user Flatpak app, as the Guard identified it: the
/// child, the ref and commit, and the deployment folder the Guard opened.
package struct FlatpakMoveRequest {
    package var uid: UInt32
    package var home: String
    package var appID: String
    package var arch: String
    package var branch: String
    package var commit: String
    /// The status (device and inode) of `~/.local/share/flatpak/app/ID/ARCH/BRANCH/COMMIT`
    /// as the Guard opened it: the move goes ahead only when the folder it reaches is this very one.
    package var deployment: FileStatus
    /// The remotes the site trusts (``FlatpakTrust``): the one the child's
    /// remote is, by URL, becomes the Guard's remote of the app, with the
    /// administrator's name, URL and keys; any other remote is added pinned.
    package var trusted: [FlatpakTrustedRemote]

    package init(uid: UInt32, home: String, appID: String, arch: String, branch: String, commit: String,
                 deployment: FileStatus, trusted: [FlatpakTrustedRemote] = []) {
        self.trusted = trusted
        self.uid = uid
        self.home = home
        self.appID = appID
        self.arch = arch
        self.branch = branch
        self.commit = commit
        self.deployment = deployment
    }
}

/// Moves an approved per-user Flatpak app into the Guard's installation:
/// the same commit, then the child's per-user copy set aside, so the
/// child's `flatpak run ID` runs the root-owned copy, which the child can
/// update through Flatpak's system helper but not remove.
///
/// Where it comes from: when the child's remote (read from their per-user
/// configuration as hostile input) has the URL of a remote the site trusts,
/// from that remote as the administrator named it, verified with the
/// administrator's keys only (the child's keyring, and the system
/// installation's keyring of that name, each filtered to the trusted
/// fingerprints); else from a remote named `NAME-uidUID` with the child's
/// URL and keys, which no approval follows without a guardian (pinned).
///
/// Crash safety: the steps are journaled (one file per move in
/// `journalDirectory`, each step written and synced before the next runs).
/// The child's copy is set aside only after the Guard's copy is deployed at
/// the approved commit and checked, by one `rename(2)`; ``recover()``, run
/// at start, finishes or undoes whatever a killed move left, so one copy
/// always stays installed and runnable, never neither.
package struct FlatpakMover {
    package var installation: GuardFlatpakInstallation
    /// Where the journals live (under the Guard's state directory).
    package var journalDirectory: String

    package init(installation: GuardFlatpakInstallation, journalDirectory: String) {
        self.installation = installation
        self.journalDirectory = journalDirectory
    }

    /// Moves the app. - Returns: the approval, now of the Guard's deployment.
    package func move(_ request: FlatpakMoveRequest) throws(FlatpakMoveError) -> FlatpakApproval {
        guard FlatpakNames.isValidAppID(request.appID), FlatpakNames.isValidArch(request.arch),
              FlatpakNames.isValidBranch(request.branch), OstreeCommit.isChecksum(request.commit) else {
            throw .invalidRequest("not a valid app ID, architecture, branch and commit")
        }
        let user = try UserInstallation(home: request.home, uid: request.uid)
        let branchFolder = try user.branchFolder(request)
        let origin = try user.origin(of: request, in: branchFolder)
        let childRemote = try FlatpakRemoteConfiguration.remote(origin, in: try user.repositoryConfiguration())
        let (remote, keyring, site) = try source(of: childRemote, user: user, request: request)
        try Self.checkFileURL(remote.url)

        // One installation holds one commit of a ref: an app another approval
        // already brought here is used as it is, never moved to another commit under it.
        let present = try installation.activeCommit(appID: request.appID, arch: request.arch, branch: request.branch)
        if let present, present != request.commit {
            throw .installation("it holds \(present) of this app for another approval, not the approved \(request.commit)")
        }
        let existed = present != nil
        let journal = try MoveJournal.create(in: journalDirectory, request: request)
        try journal.record(existed ? "begin existing" : "begin")
        let runtime: FlatpakRuntimePin
        do throws(FlatpakMoveError) {
            try addRemote(remote, keyring: keyring, site: site)
            let ref = "app/\(request.appID)/\(request.arch)/\(request.branch)"
            if !existed {
                try installation.run(["install", "-y", "--noninteractive", "--no-related", remote.name, ref])
                if try installation.activeCommit(appID: request.appID, arch: request.arch, branch: request.branch) != request.commit {
                    try installation.run(["update", "-y", "--noninteractive", "--no-related", "--commit=\(request.commit)", ref])
                }
            }
            guard try installation.activeCommit(appID: request.appID, arch: request.arch, branch: request.branch) == request.commit else {
                throw FlatpakMoveError.installation("the approved commit is not what got deployed")
            }
            runtime = try deployRuntime(of: request, from: remote.name)
        } catch {
            if !existed { try? installation.run(["uninstall", "-y", "--noninteractive", "app/\(request.appID)/\(request.arch)/\(request.branch)"]) }
            journal.remove()
            throw error
        }
        let commit: OstreeCommit
        do {
            commit = try installation.commit(request.commit)
        } catch {
            throw .installation("\(error)")
        }
        try journal.record("installed")
        try user.setAside(request, branchFolder: branchFolder)
        try journal.record("done")
        try user.setAsideRuntime(runtime.name)
        journal.remove()
        return FlatpakApproval(appID: request.appID, arch: request.arch, branch: request.branch, remote: remote.name,
                               url: remote.url, commit: request.commit, timestamp: commit.timestamp, runtime: runtime)
    }

    /// The runtime the moved app's `metadata` names, deployed in the Guard's
    /// installation (from the app's remote when the install did not bring
    /// it): the approval records its commit, and the app is itself only on
    /// it, never on a per-user copy of the same ref (FlatpakSandbox+Runtime).
    private func deployRuntime(of request: FlatpakMoveRequest, from remote: String) throws(FlatpakMoveError) -> FlatpakRuntimePin {
        let name = try installation.declaredRuntime(appID: request.appID, arch: request.arch, branch: request.branch,
                                                    commit: request.commit)
        if try installation.activeCommit(runtime: name) == nil {
            try installation.run(["install", "-y", "--noninteractive", "--no-related", remote, "runtime/\(name)"])
        }
        guard let active = try installation.activeCommit(runtime: name) else {
            throw .installation("the runtime \(name) the app names is not deployed in the Guard's installation")
        }
        do {
            return FlatpakRuntimePin(name: name, commit: active, timestamp: try installation.commit(active).timestamp)
        } catch {
            throw .installation("the runtime \(name) at \(active): \(error)")
        }
    }

    /// Finishes or undoes every move a killed mover left: where the
    /// child's copy is still in place, the Guard's copy this move installed
    /// is removed again (the approval was never recorded); where it was
    /// already set aside, the Guard's copy stays. Returns what it did, one line each.
    package func recover() -> [String] {
        var done: [String] = []
        for journal in MoveJournal.all(in: journalDirectory) {
            let ref = "app/\(journal.appID)/\(journal.arch)/\(journal.branch)"
            // Killed before its first step was recorded: no flatpak command had run.
            guard !journal.steps.isEmpty else {
                journal.remove()
                continue
            }
            let childCopy = (try? UserInstallation(home: journal.home, uid: journal.uid))
                .flatMap { try? $0.hasDeployment(journal) } ?? false
            if childCopy, !journal.steps.contains("begin existing") {
                // The journal is removed only once the Guard's copy is gone.
                guard (try? installation.run(["uninstall", "-y", "--noninteractive", ref])) != nil
                    || (try? installation.activeCommit(appID: journal.appID, arch: journal.arch, branch: journal.branch)) == nil else {
                    done.append("\(ref) of uid \(journal.uid): the Guard's copy could not be removed; kept for the next start")
                    continue
                }
                done.append("\(ref) of uid \(journal.uid): move undone, the child's copy kept")
            } else {
                done.append("\(ref) of uid \(journal.uid): the Guard's copy kept")
                if let active = try? installation.activeCommit(appID: journal.appID, arch: journal.arch, branch: journal.branch),
                   let runtime = try? installation.declaredRuntime(appID: journal.appID, arch: journal.arch,
                                                                   branch: journal.branch, commit: active),
                   let user = try? UserInstallation(home: journal.home, uid: journal.uid) {
                    do {
                        try user.setAsideRuntime(runtime)
                    } catch {
                        done.append("\(ref) of uid \(journal.uid): the per-user copy of runtime \(runtime) stays: \(error)")
                    }
                }
            }
            journal.remove()
        }
        return done
    }

    /// Where the Guard's copy comes from: the trusted remote the child's
    /// remote is (its keys from the child's and the system installation's
    /// keyrings, only those the site lists), or the child's remote, pinned.
    private func source(of child: FlatpakRemoteConfiguration, user: UserInstallation, request: FlatpakMoveRequest)
        throws(FlatpakMoveError) -> (FlatpakRemoteConfiguration, [UInt8]?, FlatpakTrustedRemote?) {
        guard let site = FlatpakTrust.match(url: child.url, in: request.trusted) else {
            let suffix = "-uid\(request.uid)"
            let name = String(decoding: child.name.utf8.prefix(64 - suffix.utf8.count), as: UTF8.self)
            var pinned = child
            pinned.name = name + suffix
            guard FlatpakRemoteConfiguration.isRemoteName(pinned.name) else { throw .remoteRefused("the remote's name is not a plain name") }
            return (pinned, child.gpgVerify ? try user.keyring(of: child.name) : nil, nil)
        }
        let remote = FlatpakRemoteConfiguration(name: site.name, url: site.url, gpgVerify: !site.fingerprints.isEmpty,
                                                collectionID: nil)
        guard remote.gpgVerify else { return (remote, nil, site) }
        var kept: [UInt8] = []
        var found: Set<String> = []
        let keyrings = [child.gpgVerify ? try? user.keyring(of: child.name) : nil,
                        try? FlatpakTrust.readRootFile(FlatpakTrust.systemInstallation, ["repo", "\(site.name).trustedkeys.gpg"],
                                                       limit: OpenPGPKeyring.sizeLimit)]
        for bytes in keyrings {
            guard let bytes, let keys = try? OpenPGPKeyring(inspecting: bytes) else { continue }
            for key in keys.keys {
                guard let fingerprint = key.fingerprint, site.fingerprints.contains(fingerprint),
                      found.insert(fingerprint).inserted else { continue }
                kept += key.packets
            }
        }
        guard !kept.isEmpty else {
            throw .remoteRefused("remote \(child.name) is the trusted remote \(site.name), but neither its keyring nor the "
                + "system installation's holds a key this site trusts for it ([Flatpak] TrustedRemote=)")
        }
        return (remote, kept, site)
    }

    private func addRemote(_ remote: FlatpakRemoteConfiguration, keyring: [UInt8]?,
                           site: FlatpakTrustedRemote?) throws(FlatpakMoveError) {
        if let existing = try? installation.remote(remote.name) {
            guard existing.url.utf8.elementsEqual(remote.url.utf8), existing.gpgVerify == remote.gpgVerify else {
                throw .remoteRefused("the Guard's installation already has a remote \(remote.name) with another URL or GPG setting")
            }
            if let site, remote.gpgVerify, let problem = installation.untrustedKeys(of: remote.name, site: site) {
                throw .remoteRefused("the Guard's installation's remote \(remote.name): \(problem); root removes it "
                    + "(flatpak remote-delete --installation=familycontrols --force \(remote.name)) and approves again")
            }
            return
        }
        var arguments = ["remote-add", "--if-not-exists"]
        if let collection = remote.collectionID { arguments.append("--collection-id=\(collection)") }
        var keyFile: String?
        if let keyring {
            let path = journalDirectory + "/keyring-\(getpid()).gpg"
            do {
                let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: 0o600)
                try file.writeAll(keyring)
            } catch {
                throw .journal("\(path): \(error)")
            }
            keyFile = path
            arguments.append("--gpg-import=\(path)")
        } else {
            arguments.append("--no-gpg-verify")
        }
        defer { if let keyFile { unlink(keyFile) } }
        try installation.run(arguments + [remote.name, remote.url])
        let added = try installation.remote(remote.name)
        guard added.url.utf8.elementsEqual(remote.url.utf8), added.gpgVerify == remote.gpgVerify else {
            throw .remoteRefused("the Guard's installation names remote \(remote.name) otherwise than the child's configuration")
        }
    }

    /// A `file://` remote must be a folder only root can change: one the
    /// child could write would let the child publish "updates" of their own.
    static func checkFileURL(_ url: String) throws(FlatpakMoveError) {
        guard url.hasPrefix("file://") else { return }
        let path = String(url.dropFirst("file://".count))
        var folder: FileDescriptor
        do {
            folder = try FileDescriptor.open("/", O_RDONLY | O_DIRECTORY)
            let components = path.split(separator: "/")
            for (index, component) in components.enumerated() {
                guard component != "..", component != "." else { throw FlatpakMoveError.remoteRefused("the file:// URL is not normalized") }
                folder = try folder.openChild(FileName(String(component)), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                let status = try folder.status()
                // A sticky folder (/tmp) lets others add names, never replace root's: fine above the repository.
                let sticky = status.mode & 0o1000 != 0 && index < components.count - 1
                guard status.uid == 0, status.mode & 0o022 == 0 || sticky else {
                    throw FlatpakMoveError.remoteRefused("the file:// remote is in a folder someone other than root can change")
                }
            }
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .remoteRefused("the file:// remote: \(error)")
        }
    }
}

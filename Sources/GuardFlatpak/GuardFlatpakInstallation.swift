#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import SystemKit
import GuardIdentity

/// The Guard's own Flatpak installation: a root-owned extra installation
/// (`/etc/flatpak/installations.d/familycontrols.conf`, shipped as
/// `Config/flatpak/familycontrols.conf`; `Path=/var/lib/familycontrols-flatpak`,
/// beside the Guard's state folder, which is 0700 while every user's Flatpak
/// must read this one) into which an approved per-user app is moved.
/// Only root changes it directly; a child reaches it only through
/// `flatpak-system-helper`, whose polkit actions let an active user update
/// an app (`app-update`) but not remove it (`app-uninstall`) or change its
/// remotes (`configure-remote`). ARCHITECTURE.md, "Flatpak apps: the lock's
/// design (measured)".
package struct GuardFlatpakInstallation: Hashable, Sendable {
    /// The `[Installation "NAME"]` the shipped configuration declares.
    package static let name = "familycontrols"
    /// Its `Path=` in the shipped configuration.
    package static let defaultPath = "/var/lib/familycontrols-flatpak"

    /// The installation's folder.
    package var path: String
    /// The `flatpak` program.
    package var flatpak: String = "/usr/bin/flatpak"
    /// `FLATPAK_CONFIG_DIR` for the commands, nil for Flatpak's own
    /// (`/etc/flatpak`): tests keep their installation's configuration out of `/etc`.
    package var configurationDirectory: String?
    /// How long one flatpak command may take before it is killed (a pull over the network).
    package var commandTimeout: Int64 = 600

    package init(path: String = defaultPath, configurationDirectory: String? = nil) {
        self.path = path
        self.configurationDirectory = configurationDirectory
    }

    /// The environment every flatpak command gets, and nothing else.
    var environment: [String] {
        ["PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"]
            + (configurationDirectory.map { ["FLATPAK_CONFIG_DIR=\($0)"] } ?? [])
    }

    /// Runs `flatpak ARGUMENTS --installation=familycontrols` as root, its
    /// standard error the caller's (the journal, under systemd).
    /// - Throws: ``FlatpakMoveError/command(_:_:)`` when it cannot start,
    ///   fails, or outlives ``commandTimeout``.
    func run(_ arguments: [String]) throws(FlatpakMoveError) {
        let words = [arguments[0], "--installation=\(Self.name)"] + arguments.dropFirst()
        let what = "flatpak " + words.joined(separator: " ")
        do {
            let null = try FileDescriptor.open("/dev/null", O_RDWR)
            let helper = try HelperProcess.spawn(flatpak, arguments: words, environment: environment, descriptor: null.rawValue)
            guard let exit = try helper.waitForExit(until: MonotonicInstant.now + .seconds(commandTimeout)) else {
                helper.kill()
                throw FlatpakMoveError.command(what, "still running after \(commandTimeout) s; killed")
            }
            guard exit == .exited(0) else { throw FlatpakMoveError.command(what, "\(exit)") }
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .command(what, "\(error)")
        }
    }

    // MARK: - Reading the installation, by descriptor, never through a link

    /// Opens `components` below the installation, each a folder reached without following a link.
    func openFolder(_ components: [String]) throws(Errno) -> FileDescriptor {
        var folder = try FileDescriptor.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        for component in components {
            folder = try folder.openChild(FileName(component), flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        }
        return folder
    }

    /// The commit `app/ID/ARCH/BRANCH/active` names, or nil when the app is not deployed there.
    package func activeCommit(appID: String, arch: String, branch: String) throws(FlatpakMoveError) -> String? {
        try activeCommit(["app", appID, arch, branch])
    }

    /// The commit `runtime/ID/ARCH/BRANCH/active` names for `runtime`
    /// (`ID/ARCH/BRANCH`), or nil when it is not deployed there.
    package func activeCommit(runtime: String) throws(FlatpakMoveError) -> String? {
        try activeCommit(["runtime"] + Self.parts(runtime))
    }

    private func activeCommit(_ components: [String]) throws(FlatpakMoveError) -> String? {
        do {
            let folder = try openFolder(components)
            let target = String(decoding: try folder.linkTarget(of: FileName("active")), as: UTF8.self)
            guard OstreeCommit.isChecksum(target) else { throw FlatpakMoveError.installation("active names \(target.utf8.count) bytes, not a commit") }
            return target
        } catch let error as FlatpakMoveError {
            throw error
        } catch let error as Errno where error.rawValue == ENOENT {
            return nil
        } catch {
            throw .installation("\(components.joined(separator: "/"))/active: \(error)")
        }
    }

    /// The commit the installation's repository holds for `remote`'s ref of the app, or nil.
    package func remoteRef(_ remote: String, appID: String, arch: String, branch: String) throws(FlatpakMoveError) -> String? {
        try remoteRef(remote, ["app", appID, arch, branch])
    }

    /// The commit the installation's repository holds for `remote`'s ref of `runtime` (`ID/ARCH/BRANCH`), or nil.
    package func remoteRef(_ remote: String, runtime: String) throws(FlatpakMoveError) -> String? {
        try remoteRef(remote, ["runtime"] + Self.parts(runtime))
    }

    private func remoteRef(_ remote: String, _ ref: [String]) throws(FlatpakMoveError) -> String? {
        do {
            let folder = try openFolder(["repo", "refs", "remotes", remote] + ref.dropLast())
            let file = try folder.openChild(FileName(ref.last ?? ""), flags: O_RDONLY | O_NOFOLLOW)
            let text = String(decoding: try file.readAll(limit: 128), as: UTF8.self)
            let commit = String(text.prefix { $0 != "\n" })
            guard OstreeCommit.isChecksum(commit) else { throw FlatpakMoveError.installation("the ref of \(remote) holds no commit") }
            return commit
        } catch let error as FlatpakMoveError {
            throw error
        } catch let error as Errno where error.rawValue == ENOENT {
            return nil
        } catch {
            throw .installation("the ref of \(remote): \(error)")
        }
    }

    /// The runtime (`ID/ARCH/BRANCH`) the `metadata` of the app's deployment of `commit` names.
    package func declaredRuntime(appID: String, arch: String, branch: String, commit: String) throws(FlatpakMoveError) -> String {
        let bytes: [UInt8]
        do {
            let file = try openFolder(["app", appID, arch, branch, commit]).openChild(FileName("metadata"), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            guard try file.status().type == .regular else { throw FlatpakMoveError.installation("its metadata is not a regular file") }
            bytes = try file.readAll(limit: FlatpakSandbox.metadataLimit + 1)
        } catch let error as FlatpakMoveError {
            throw error
        } catch {
            throw .installation("the metadata of app/\(appID)/\(arch)/\(branch)/\(commit): \(error)")
        }
        guard bytes.count <= FlatpakSandbox.metadataLimit, let runtime = FlatpakSandbox.declaredRuntime(inMetadata: bytes),
              FlatpakRuntimePin.parts(of: runtime) != nil else {
            throw .installation("the metadata of app/\(appID)/\(arch)/\(branch)/\(commit) names no runtime ID/ARCH/BRANCH")
        }
        return runtime
    }

    /// `ID/ARCH/BRANCH` as three folder names; a name that is not one gives no folder Flatpak could have made.
    private static func parts(_ runtime: String) -> [String] {
        guard let parts = FlatpakRuntimePin.parts(of: runtime) else { return ["", "", ""] }
        return [parts.id, parts.arch, parts.branch]
    }

    /// The commit object `checksum` of the installation's repository.
    /// - Throws: ``OstreeCommitError``; `.unreadable` when it is not there.
    package func commit(_ checksum: String) throws(OstreeCommitError) -> OstreeCommit {
        guard OstreeCommit.isChecksum(checksum) else { throw .unreadable("not a commit checksum") }
        let file: FileDescriptor
        do {
            let folder = try openFolder(["repo", "objects", String(checksum.prefix(2))])
            file = try folder.openChild(FileName(String(checksum.dropFirst(2)) + ".commit"), flags: O_RDONLY | O_NOFOLLOW)
            guard try file.status().type == .regular else { throw OstreeCommitError.unreadable("not a regular file") }
        } catch let error as OstreeCommitError {
            throw error
        } catch {
            throw .unreadable("\(error)")
        }
        guard let size = try? file.byteCount(), size <= OstreeCommit.sizeLimit else {
            throw .unreadable("it is larger than \(OstreeCommit.sizeLimit) bytes")
        }
        return try OstreeCommit.inspecting(file)
    }

    /// The remote `name` as the installation's own `repo/config` names it.
    package func remote(_ name: String) throws(FlatpakMoveError) -> FlatpakRemoteConfiguration {
        try FlatpakRemoteConfiguration.remote(name, in: try repositoryConfiguration())
    }

    /// The names of the installation's remotes.
    package func remoteNames() throws(FlatpakMoveError) -> [String] {
        try FlatpakRemoteConfiguration.remoteNames(in: try repositoryConfiguration())
    }

    /// The keys remote `name` verifies commits with (`repo/NAME.trustedkeys.gpg`).
    package func keyring(of name: String) throws(FlatpakMoveError) -> OpenPGPKeyring {
        guard FlatpakRemoteConfiguration.isRemoteName(name) else { throw .remoteRefused("not a plain remote name") }
        let bytes: [UInt8]
        do {
            let file = try openFolder(["repo"]).openChild(FileName("\(name).trustedkeys.gpg"), flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
            guard try file.status().type == .regular else { throw FlatpakMoveError.installation("the keyring of \(name) is not a regular file") }
            bytes = try file.readAll(limit: OpenPGPKeyring.sizeLimit + 1)
        } catch let error as FlatpakMoveError {
            throw error
        } catch let error as Errno where error.rawValue == ENOENT {
            bytes = []
        } catch {
            throw .installation("the keyring of \(name): \(error)")
        }
        return try OpenPGPKeyring(inspecting: bytes)
    }

    /// Why remote `name` is not the trusted `site` in this installation, or
    /// nil when it is: its URL, its GPG setting, and its keys, every one of
    /// which must be one the site lists.
    package func untrustedKeys(of name: String, site: FlatpakTrustedRemote) -> String? {
        let remote: FlatpakRemoteConfiguration
        do {
            remote = try self.remote(name)
        } catch {
            return "\(error)"
        }
        guard site.hasURL(remote.url) else { return "it names \(remote.url), not the trusted \(site.url)" }
        guard remote.gpgVerify == !site.fingerprints.isEmpty else { return "its signature check is not the trusted one" }
        guard remote.gpgVerify else { return nil }
        let keys: OpenPGPKeyring
        do {
            keys = try keyring(of: name)
        } catch {
            return "\(error)"
        }
        guard !keys.keys.isEmpty else { return "it holds no key" }
        let foreign = keys.keys.filter { key in key.fingerprint.map { !site.fingerprints.contains($0) } ?? true }
        guard foreign.isEmpty else {
            return "it verifies with keys this site does not trust (\(foreign.map { $0.fingerprint ?? "a key of another version" }.joined(separator: ", ")))"
        }
        return nil
    }

    private func repositoryConfiguration() throws(FlatpakMoveError) -> [UInt8] {
        do {
            let repo = try openFolder(["repo"])
            return try repo.openChild(FileName("config"), flags: O_RDONLY | O_NOFOLLOW)
                .readAll(limit: FlatpakRemoteConfiguration.sizeLimit + 1)
        } catch {
            throw .installation("repo/config: \(error)")
        }
    }
}

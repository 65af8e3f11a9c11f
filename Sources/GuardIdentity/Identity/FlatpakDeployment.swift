import FlatpakNames
import SystemKit

/// A Flatpak installation whose deployments the Guard recognises: the
/// per-user one of the calling user, or the system one.
package struct FlatpakInstallation: Hashable, Sendable {
    package enum Kind: Hashable, Sendable {
        /// `~/.local/share/flatpak` of user `uid`, which must own it.
        case user(uid: UInt32)
        /// `/var/lib/flatpak`, which only root may change.
        case system
    }

    /// The installation's folder, normalized, never resolved through links.
    package var path: String
    package var kind: Kind

    package init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }

    /// The per-user installation of a user whose home is `home`.
    package static func user(home: String, uid: UInt32) -> FlatpakInstallation {
        FlatpakInstallation(path: (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.local/share/flatpak",
                            kind: .user(uid: uid))
    }

    /// The system installation, at Debian's and Flatpak's default place.
    package static let system = FlatpakInstallation(path: "/var/lib/flatpak", kind: .system)

    /// The owner its folders must have.
    package var owner: UInt32 {
        switch kind {
        case .user(let uid): uid
        case .system: 0
        }
    }
}

/// One deployment of an app or a runtime in an installation:
/// `INSTALLATION/app/ID/ARCH/BRANCH/COMMIT` (or `runtime/…`), whose `files`
/// folder is what the sandbox sees as `/app` (a runtime's, as `/usr`).
package struct FlatpakDeployment: Hashable, Sendable {
    package enum Kind: String, Hashable, Sendable {
        case app, runtime
    }

    package var installation: FlatpakInstallation
    package var kind: Kind = .app
    package var appID: String
    package var arch: String
    package var branch: String
    package var commit: String

    package init(installation: FlatpakInstallation, kind: Kind = .app, appID: String, arch: String, branch: String,
                 commit: String) {
        self.installation = installation
        self.kind = kind
        self.appID = appID
        self.arch = arch
        self.branch = branch
        self.commit = commit
    }

    /// The deployment's path below its installation: `app/ID/ARCH/BRANCH/COMMIT`.
    package var relativePath: String { "\(kind.rawValue)/\(appID)/\(arch)/\(branch)/\(commit)" }
    /// The deployment's folder.
    package var path: String { installation.path + "/" + relativePath }
    /// Its `files` folder, Flatpak's `app-path`.
    package var filesPath: String { path + "/files" }

    /// The deployment `info` names, when its `app-path` is the `files`
    /// folder of a deployment of that very app, architecture, branch and
    /// commit in one of `installations`; the path alone decides, nothing is
    /// opened.
    /// - Throws: ``FlatpakIdentityError/notInInstallation(path:)`` when
    ///   `app-path` is under none of them, or is not a deployment's `files`;
    ///   ``FlatpakIdentityError/deploymentMismatch(path:_:)`` when it is
    ///   another app's, branch's, architecture's or commit's.
    package static func named(by info: FlatpakInfo,
                              in installations: [FlatpakInstallation]) throws(FlatpakIdentityError) -> FlatpakDeployment {
        try named(path: info.appPath, kind: .app, id: info.appID, arch: info.arch, branch: info.branch,
                  commit: info.appCommit, in: installations)
    }

    /// The runtime deployment `info` names: `runtime-path` must be the
    /// `files` of a deployment of the `runtime` ref at `runtime-commit`, in
    /// one of `installations`; from the path alone.
    /// - Throws: as ``named(by:in:)``, and
    ///   ``FlatpakIdentityError/deploymentMismatch(path:_:)`` when the
    ///   file names no runtime, or no runtime commit.
    package static func runtime(namedBy info: FlatpakInfo,
                                in installations: [FlatpakInstallation]) throws(FlatpakIdentityError) -> FlatpakDeployment {
        let path = info.runtimePath ?? ""
        let ref = (info.runtime ?? "").split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard ref.count == 4, ref[0] == "runtime", let commit = info.runtimeCommit else {
            throw .deploymentMismatch(path: path, ".flatpak-info names no runtime and runtime commit")
        }
        return try named(path: path, kind: .runtime, id: ref[1], arch: ref[2], branch: ref[3], commit: commit,
                         in: installations)
    }

    private static func named(path: String, kind: Kind, id: String, arch: String, branch: String, commit: String,
                              in installations: [FlatpakInstallation]) throws(FlatpakIdentityError) -> FlatpakDeployment {
        guard FlatpakNames.isNormalizedAbsolutePath(path) else { throw .notInInstallation(path: path) }
        for installation in installations {
            let prefix = installation.path + "/"
            guard path.hasPrefix(prefix) else { continue }
            let parts = path.utf8.dropFirst(prefix.utf8.count)
                .split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
                .map { String(decoding: $0, as: UTF8.self) }
            guard parts.count == 6, parts[0] == kind.rawValue, parts[5] == "files" else { continue }
            let deployment = FlatpakDeployment(installation: installation, kind: kind, appID: parts[1], arch: parts[2],
                                               branch: parts[3], commit: parts[4])
            // Compared as bytes: `String ==` would equate canonically equivalent spellings.
            if !deployment.appID.utf8.elementsEqual(id.utf8) { throw .deploymentMismatch(path: path, "it is not a deployment of \(id)") }
            if !deployment.arch.utf8.elementsEqual(arch.utf8) { throw .deploymentMismatch(path: path, "it is not for \(arch)") }
            if !deployment.branch.utf8.elementsEqual(branch.utf8) { throw .deploymentMismatch(path: path, "it is not of branch \(branch)") }
            if !deployment.commit.utf8.elementsEqual(commit.utf8) { throw .deploymentMismatch(path: path, "it is not commit \(commit)") }
            return deployment
        }
        throw .notInInstallation(path: path)
    }

    /// A path as the sandbox sees it (`/proc/PID/exe`, `/proc/PID/maps`),
    /// relative to the deployment's `files` when it is under `/app`; nil
    /// otherwise, or when it is not in its one normalized spelling.
    package static func pathInsideApp(_ sandboxPath: String) -> String? {
        pathInside("/app/", sandboxPath)
    }

    /// A path as the sandbox sees it, relative to the runtime deployment's
    /// `files` when it is under `/usr`, as ``pathInsideApp(_:)``.
    package static func pathInsideRuntime(_ sandboxPath: String) -> String? {
        pathInside("/usr/", sandboxPath)
    }

    private static func pathInside(_ prefix: String, _ sandboxPath: String) -> String? {
        guard FlatpakNames.isNormalizedAbsolutePath(sandboxPath), sandboxPath.hasPrefix(prefix) else { return nil }
        return String(decoding: sandboxPath.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }
}

extension FlatpakDeployment {
    /// The app deployment whose folder is `path`, as the store records it:
    /// `INSTALLATION/app/ID/ARCH/BRANCH/COMMIT`, in the system installation
    /// (or another of root's) when `system`, else in user `uid`'s.
    package init?(recordedAt path: String, system: Bool, uid: UInt32) {
        guard FlatpakNames.isNormalizedAbsolutePath(path) else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 7, parts[parts.count - 5] == Kind.app.rawValue else { return nil }
        let installation = parts.dropLast(5).joined(separator: "/")
        self.init(installation: FlatpakInstallation(path: installation, kind: system ? .system : .user(uid: uid)),
                  kind: .app, appID: parts[parts.count - 4], arch: parts[parts.count - 3],
                  branch: parts[parts.count - 2], commit: parts[parts.count - 1])
    }
}

/// Why a sandboxed process is not accepted as the Flatpak app its
/// `.flatpak-info` names.
package enum FlatpakIdentityError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `.flatpak-info` could not be opened or read as a regular file.
    case infoUnreadable(String)
    /// `.flatpak-info` was read but is refused.
    case info(String)
    /// The inspector reading `.flatpak-info` hung, crashed, or answered out of its interface.
    case inspectorFailed(String)
    /// `app-path` is not the `files` of a deployment in a recognised installation.
    case notInInstallation(path: String)
    /// `app-path` is a deployment of something other than what `.flatpak-info` says.
    case deploymentMismatch(path: String, String)
    /// The installation or deployment folder cannot be trusted as one.
    case deploymentUnusable(path: String, String)
    /// The executable is not the file at its path in the deployment.
    case executableNotInDeployment(executable: String, deployment: String)
    /// The process runs on a runtime that is not the app's own.
    case runtimeNotTheApps(String)

    package var description: String {
        switch self {
        case .infoUnreadable(let problem):
            "the sandbox's .flatpak-info cannot be read: \(problem)"
        case .info(let problem):
            DisplayText.sanitized(problem)
        case .inspectorFailed(let problem):
            "the sandbox's .flatpak-info could not be read: \(DisplayText.sanitized(problem))"
        case .notInInstallation(let path):
            "\(DisplayText.sanitized(path)) is not a deployment's files in a recognised Flatpak installation"
        case .deploymentMismatch(let path, let problem):
            "\(DisplayText.sanitized(path)) does not match .flatpak-info: \(problem)"
        case .deploymentUnusable(let path, let problem):
            "\(DisplayText.sanitized(path)) cannot be a Flatpak deployment: \(problem)"
        case .executableNotInDeployment(let executable, let deployment):
            "\(DisplayText.sanitized(executable)) is not the file at its path in the deployment \(DisplayText.sanitized(deployment))"
        case .runtimeNotTheApps(let problem):
            "not the app's own runtime: \(problem)"
        }
    }
}

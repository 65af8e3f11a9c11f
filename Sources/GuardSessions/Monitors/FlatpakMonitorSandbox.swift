#if canImport(Glibc)
import Glibc
#endif
import LockEngine
import SystemKit
import GuardIdentity

/// Whether a Flatpak app's monitor runs the approved deployment.
///
/// `flatpak run` finds a deployment by its path, and in a per-user
/// installation the child may rename the folders above the locked app and
/// plant a copy of its own at the old path. So the approved deployment is
/// checked twice: before the start, the folder at the path `flatpak run`
/// reads must be the approved one (its device and inode); after it, the
/// sandbox's `/app` must be that deployment's very `files` folder, which a
/// path game cannot change once the sandbox is set up.
struct FlatpakMonitorSandbox: Hashable, Sendable {
    /// The folder the approval locks and identifies (``FlatpakLockPlacement``).
    var folderPath: String
    /// Its identity at approval; nil in approvals made before it was kept.
    var folder: FileIdentity?
    var deployment: FlatpakDeployment

    /// How long a started monitor may take to show its sandbox before it is
    /// taken as not the approved app.
    static let showWithin: Duration = .seconds(30)
    /// The processes of one monitor looked at, at most.
    static let descendantLimit = 64

    /// The identity of the approved deployment's `files` folder, found under
    /// the approved folder at ``folderPath``, one component at a time
    /// without following a link.
    /// - Throws: what is wrong, for the log and the audit trail.
    func approvedFiles() throws(MonitorStartError) -> FileIdentity {
        guard let opened = try? OpenedDirectory.open(folderPath) else {
            throw .notApproved("its approved folder \(DisplayText.sanitized(folderPath).clipped) cannot be opened")
        }
        if let folder, opened.identity != folder {
            throw .notApproved("the folder at \(DisplayText.sanitized(folderPath).clipped), where flatpak run looks for it, "
                + "is not the approved one (\(opened.identity), approved \(folder)): the folders above it were moved")
        }
        let inside = "\(deployment.arch)/\(deployment.branch)/\(deployment.commit)/files"
        guard let files = opened.status(of: inside), files.type == .directory else {
            throw .notApproved("the approved deployment \(DisplayText.sanitized(deployment.path).clipped) has no files folder")
        }
        return FileIdentity(files)
    }

    /// What a process shows of its sandbox.
    enum Verdict: Equatable {
        /// In a Flatpak sandbox whose `/app` is the approved `files` folder.
        case approved
        /// In a Flatpak sandbox of another `/app`.
        case another(FileIdentity)
        /// Not in a sandbox set up yet (or gone).
        case notSandboxed
    }

    /// Judges process `pid` against `files`: a process in a Flatpak sandbox
    /// (its root holds `.flatpak-info`, which `flatpak run` writes) whose
    /// `/app` is, or is not, that folder.
    static func judge(_ pid: pid_t, files: FileIdentity) -> Verdict {
        guard let root = try? FileDescriptor.open("/proc/\(pid)/root", O_RDONLY | O_DIRECTORY),
              let info = try? root.status(of: FileName(".flatpak-info")), info.type == .regular,
              let app = try? root.status(of: FileName("app")), app.type == .directory else { return .notSandboxed }
        let identity = FileIdentity(app)
        return identity == files ? .approved : .another(identity)
    }

    /// The descendants of `root`, nearest first, at most ``descendantLimit``:
    /// each process's children as `/proc/PID/task/TID/children` lists them,
    /// so only the monitor's own few processes are read, never all of
    /// `/proc` (the look is repeated while a sandbox is being set up, and a
    /// child's kill loop repeats the set-up).
    static func descendants(of root: pid_t) -> [pid_t] {
        var found: [pid_t] = [], next = [root]
        while !next.isEmpty, found.count < descendantLimit {
            let pid = next.removeFirst()
            for child in children(of: pid) where found.count < descendantLimit {
                found.append(child)
                next.append(child)
            }
        }
        return found
    }

    /// The children of every thread of `pid`; none when it is gone.
    private static func children(of pid: pid_t) -> [pid_t] {
        guard let tasks = try? FileDescriptor.open("/proc/\(pid)/task", O_RDONLY | O_DIRECTORY),
              let entries = try? tasks.readDirectory() else { return [] }
        var children: [pid_t] = []
        for entry in entries {
            let name = String(decoding: entry.name.bytes, as: UTF8.self)
            guard pid_t(name) != nil,
                  let bytes = try? FileDescriptor.readFile("/proc/\(pid)/task/\(name)/children", limit: 64 << 10) else { continue }
            children += bytes.split(separator: UInt8(ascii: " ")).compactMap { pid_t(String(decoding: $0, as: UTF8.self)) }
        }
        return children
    }

    /// What the descendants of `root` show: approved when one runs in the
    /// approved sandbox, another when one runs in another (a decoy), else
    /// not sandboxed (yet).
    static func judge(descendantsOf root: pid_t, files: FileIdentity) -> Verdict {
        var verdict = Verdict.notSandboxed
        for pid in descendants(of: root) {
            switch judge(pid, files: files) {
            case .approved: verdict = .approved
            case .another(let identity): return .another(identity)
            case .notSandboxed: continue
            }
        }
        return verdict
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The programs under the folders where programs live that raise the
/// privilege of whoever runs them: setuid or setgid, or with file
/// capabilities (`security.capability`). Found by descriptor, a folder at
/// a time: no symbolic link followed, no other filesystem entered, a
/// `nosuid` mount skipped (the kernel ignores both there), and at most a
/// fixed number of entries and levels, past which the walk says it stopped.
struct PrivilegedPrograms {
    struct Program {
        var path: String
        var status: FileStatus
        /// nil: none, or none the kernel would honour for everyone.
        var capabilities: FileCapabilities?
        /// The folders from the walk's start down to the program's, each
        /// of which the caller must be able to search.
        var folders: [FileStatus]

        var setUID: Bool { status.permissions & UInt32(S_ISUID) != 0 }
        /// setgid on a file no group may execute is mandatory locking, not a privilege.
        var setGID: Bool { status.permissions & UInt32(S_ISGID) != 0 && status.permissions & 0o010 != 0 }

        /// Whether `user`, in `groups`, may run it: execute permission on
        /// the file and search permission on every folder of the walk (owners
        /// and modes; ACLs are not read).
        func isExecutable(by user: UserAccount, groups: GroupMembership) -> Bool {
            func allows(_ status: FileStatus) -> Bool {
                if status.uid == user.uid { return status.permissions & 0o100 != 0 }
                if groups.ids.contains(status.gid) { return status.permissions & 0o010 != 0 }
                return status.permissions & 0o001 != 0
            }
            return allows(status) && folders.allSatisfy(allows)
        }
    }

    private(set) var programs: [Program] = []
    /// The folders where the walk stopped at its bound, or could not read.
    private(set) var incomplete: [(folder: String, reason: String)] = []
    private var visited: Set<[UInt64]> = []
    private var entries = 0
    private let entryLimit: Int
    private let depthLimit: Int

    /// Walks each of `roots` that is a folder (a link to one is skipped:
    /// its target is walked where it is listed).
    init(roots: [String], entryLimit: Int, depthLimit: Int) {
        self.entryLimit = entryLimit
        self.depthLimit = depthLimit
        for root in roots {
            guard let folder = try? FileDescriptor.open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW),
                  let status = try? folder.status() else { continue }
            if (try? folder.isOnNoSUIDMount()) == true { continue }
            walk(folder, path: root, status: status, device: status.device, chain: [])
        }
    }

    private mutating func walk(_ folder: FileDescriptor, path: String, status: FileStatus, device: UInt64, chain: [FileStatus]) {
        guard visited.insert([status.device, status.inode]).inserted else { return }
        guard chain.count < depthLimit else {
            incomplete.append((path, "deeper than \(depthLimit) levels"))
            return
        }
        let listing: [DirectoryEntry]
        do throws(Errno) {
            listing = try folder.readDirectory()
        } catch {
            incomplete.append((path, "\(error)"))
            return
        }
        let chain = chain + [status]
        for entry in listing {
            entries += 1
            if entries > entryLimit {
                if entries == entryLimit + 1 { incomplete.append((path, "more than \(entryLimit) files")) }
                return
            }
            // Only folders and regular files matter; the kernel's file type spares a stat of anything else.
            if let type = entry.type, type != .directory && type != .regular { continue }
            guard let found = try? folder.status(of: entry.name) else { continue }
            func childPath() -> String { (path == "/" ? "" : path) + "/" + entry.name.display }
            switch found.type {
            case .directory where found.device == device:
                guard let child = try? folder.openChild(entry.name, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW) else { continue }
                walk(child, path: childPath(), status: found, device: device, chain: chain)
            case .regular where found.permissions & 0o111 != 0:
                let attribute = try? folder.extendedAttribute("security.capability", of: entry.name, limit: 64)
                let capabilities = attribute.flatMap { $0 }.flatMap(FileCapabilities.init(attribute:))
                let program = Program(path: childPath(), status: found,
                                      capabilities: capabilities.flatMap { $0.permitted == 0 ? nil : $0 }, folders: chain)
                if program.setUID || program.setGID || program.capabilities != nil { programs.append(program) }
            default:
                continue
            }
        }
    }
}

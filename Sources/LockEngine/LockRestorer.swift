#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Clears the immutable attribute wherever the lock set it, giving every
/// recorded entry back the flags it had; owner, group and mode were never
/// changed.
///
/// Directories are restored after their entries, so each directory stays
/// frozen while the engine works inside it. An entry that was already
/// immutable before the lock keeps its flag; replaced and unrecorded entries
/// are reported and left as they are.
struct LockRestorer: TreeVisitor {
    let device: UInt64
    let hooks: LockEngineHooks
    private let entries: [LockedEntry]
    private let index: [String: Int]
    private var coverage: EntryCoverage
    private var flagsSupported = true
    private(set) var findings: [String] = []
    private(set) var restored = 0
    /// Entries whose flag the lock set and this pass could not clear: the
    /// unlock is not finished while there are any.
    private(set) var leftImmutable: [String] = []

    init(entries: [LockedEntry], root: WalkDirectory, hooks: LockEngineHooks) {
        self.device = root.status.device
        self.hooks = hooks
        self.entries = entries
        self.coverage = EntryCoverage(count: entries.count)
        self.index = entries.positionsByPath()
    }

    /// Handles the app directory itself; when this returns true, walk it: it
    /// is restored last, as the walk leaves it.
    mutating func begin(with root: WalkDirectory) throws -> Bool {
        if try root.missingFlagSupport() != nil { flagsSupported = false }
        return try handleOpened(root.descriptor, status: root.status, path: "") != nil
    }

    /// Recorded entries that were not found where the walk looked.
    var missingEntries: [String] { coverage.missing(in: entries) }

    mutating func visit(_ entry: DirectoryEntry, path: String, in parent: WalkDirectory) throws -> WalkDirectory? {
        let type: FileStatus.FileType
        switch try parent.access(to: entry, path: path) {
        case nil:
            return nil
        case .byName(let status)?:
            if let position = match(path, status) { coverage.markSeen(position) }
            return nil
        case .open(let opened)?:
            type = opened
        }
        let descriptor: FileDescriptor
        let status: FileStatus
        do {
            descriptor = try parent.descriptor.openChild(
                entry.name, flags: type == .directory ? AppDirectory.directoryFlags : AppDirectory.fileFlags)
            status = try descriptor.status()
        } catch where EntryRecorder.isRace(error) {
            return nil
        } catch where error.rawValue == EAGAIN {
            findings.append("\(path): held by another process's lease; it stays immutable until "
                + "`familyctl locks verify` finishes the unlock once the lease is released")
            if let position = index[path] {
                coverage.markSeen(position)
                if entries[position].takesFlag, !entries[position].wasImmutable { leftImmutable.append(path) }
            }
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
        return try handleOpened(descriptor, status: status, path: path)
    }

    mutating func leave(_ directory: WalkDirectory) throws {
        guard let position = index[directory.relativePath], entries[position].isSameFile(directory.status) else { return }
        try restore(directory.descriptor, status: directory.status, entry: entries[position])
    }

    private mutating func handleOpened(_ descriptor: FileDescriptor, status: FileStatus, path: String) throws -> WalkDirectory? {
        guard let position = match(path, status) else {
            if status.type == .directory { coverage.skip(path) }
            return nil
        }
        coverage.markSeen(position)
        let entry = entries[position]
        guard entry.kind == .directory else {
            try restore(descriptor, status: status, entry: entry)
            return nil
        }
        // Walked whether or not it is still frozen: only entries whose inode
        // was recorded are touched, so a change made meanwhile cannot mislead it.
        return WalkDirectory(descriptor: descriptor, relativePath: path, status: status)
    }

    private mutating func restore(_ descriptor: FileDescriptor, status: FileStatus, entry: LockedEntry) throws {
        if !entry.hasOriginalOwnership(status) {
            let now = LockedEntry.describe(uid: status.uid, gid: status.gid, mode: status.permissions)
            let then = LockedEntry.describe(uid: entry.uid, gid: entry.gid, mode: entry.mode)
            findings.append("\(describe(entry.relativePath)): changed since the lock (now \(now), \(then) when locked); "
                + "owner and mode left as they are")
        }
        // The lock set nothing on an entry that was immutable already.
        guard flagsSupported, entry.takesFlag, !entry.wasImmutable else { return }
        guard var flags = readFlags(descriptor, path: entry.relativePath) else {
            // Unreadable, not unsupported: the flag may still be on.
            if flagsSupported { leftImmutable.append(entry.relativePath) }
            return
        }
        guard flags.contains(.immutable) else { return }
        try hooks.beforeChange(entry.relativePath)
        flags.remove(.immutable)
        do {
            try descriptor.setFlags(flags)
            restored += 1
        } catch {
            findings.append("\(describe(entry.relativePath)): could not be restored: \(error)")
            leftImmutable.append(entry.relativePath)
        }
    }

    /// The recorded entry for `path` if it is this very file; reports it otherwise.
    private mutating func match(_ path: String, _ status: FileStatus) -> Int? {
        guard let position = index[path] else {
            findings.append("\(describe(path)): not recorded by the lock; left as it is")
            return nil
        }
        guard entries[position].isSameFile(status), status.device == device else {
            coverage.markSeen(position)
            findings.append("\(describe(path)): replaced since the lock (another file now has this name); left as it is")
            return nil
        }
        return position
    }

    private mutating func readFlags(_ descriptor: FileDescriptor, path: String) -> FileFlags? {
        guard flagsSupported else { return nil }
        do {
            return try descriptor.flags()
        } catch where error.meansFlagsUnsupported {
            flagsSupported = false
        } catch {
            findings.append("\(describe(path)): could not read its flags: \(error)")
        }
        return nil
    }

    private func describe(_ path: String) -> String { path.isEmpty ? "app directory" : path }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Gives every recorded entry of a locked app directory back its recorded
/// owner, group and mode, and clears the immutable flag where the lock set it.
///
/// Directories are restored after their entries, so each directory stays
/// frozen (root-owned, read-only, immutable) while the engine works inside it.
/// Entries an administrator changed since the lock, replaced entries and
/// unrecorded ones are reported and left as they are.
struct LockRestorer: TreeVisitor {
    let device: UInt64
    let hooks: LockEngineHooks
    private let entries: [LockedEntry]
    private let index: [String: Int]
    private var coverage: EntryCoverage
    private var flagsSupported = true
    private(set) var findings: [String] = []
    private(set) var restored = 0

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
            try handleNamed(entry.name, status: status, path: path, in: parent)
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
        } catch {
            throw LockError.system(path: path, error)
        }
        return try handleOpened(descriptor, status: status, path: path)
    }

    mutating func leave(_ directory: WalkDirectory) throws {
        guard let position = index[directory.relativePath] else { return }
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
        let immutable = readFlags(descriptor, path: path)?.contains(.immutable) ?? false
        if status.isFrozen(immutable: immutable) {
            return WalkDirectory(descriptor: descriptor, relativePath: path, status: status)
        }
        // Restored directories come after their entries, so one already back
        // to its original state has nothing locked below it.
        coverage.skip(path)
        if !entry.hasOriginalOwnership(status) {
            findings.append("\(describe(path)): changed since the lock (\(current(status))); "
                + "it and its entries were left as they are")
        }
        return nil
    }

    private mutating func restore(_ descriptor: FileDescriptor, status: FileStatus, entry: LockedEntry) throws {
        let flags = readFlags(descriptor, path: entry.relativePath)
        let immutable = flags?.contains(.immutable) ?? false
        let setByLock = immutable && !entry.wasImmutable
        let original = entry.hasOriginalOwnership(status)
        guard setByLock || !original else { return }
        // The lock changed nothing on an entry that was immutable already.
        guard !(immutable && entry.wasImmutable) else { return }
        try hooks.beforeChange(entry.relativePath)
        do {
            if setByLock, var flags {
                flags.remove(.immutable)
                try descriptor.setFlags(flags)
            }
            if !original {
                guard entry.hasLockedOwnership(status) || entry.isHalfRestored(status) else {
                    findings.append(changedByHand(entry, status))
                    return
                }
                let chown = status.uid != entry.uid || status.gid != entry.gid
                if chown { try descriptor.changeOwner(uid: entry.uid, gid: entry.gid) }
                if chown || status.permissions != entry.mode { try descriptor.changeMode(entry.mode) }
            }
            restored += 1
        } catch {
            findings.append("\(describe(entry.relativePath)): could not be restored: \(error)")
        }
    }

    /// Restores a link or special file by name; its directory is still frozen.
    private mutating func handleNamed(_ name: FileName, status: FileStatus, path: String, in parent: WalkDirectory) throws {
        guard let position = match(path, status) else { return }
        coverage.markSeen(position)
        let entry = entries[position]
        guard !entry.hasOriginalOwnership(status) else { return }
        guard entry.hasLockedOwnership(status) || entry.isHalfRestored(status) else {
            findings.append(changedByHand(entry, status))
            return
        }
        try hooks.beforeChange(path)
        do {
            try parent.descriptor.changeOwner(of: name, uid: entry.uid, gid: entry.gid)
            if entry.kind == .other { try parent.descriptor.changeMode(of: name, entry.mode) }
            restored += 1
        } catch {
            findings.append("\(path): could not be restored: \(error)")
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

    private func changedByHand(_ entry: LockedEntry, _ status: FileStatus) -> String {
        "\(describe(entry.relativePath)): changed since the lock (\(current(status)), "
            + "locked was \(LockedEntry.describe(uid: entry.lockedUID, gid: entry.gid, mode: entry.lockedMode))); "
            + "owner and mode left as they are"
    }

    private func current(_ status: FileStatus) -> String {
        "now " + LockedEntry.describe(uid: status.uid, gid: status.gid, mode: status.permissions)
    }

    private func describe(_ path: String) -> String { path.isEmpty ? "app directory" : path }
}

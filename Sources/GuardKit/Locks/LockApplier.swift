#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Brings every recorded entry of an app directory to its locked state, or
/// (inspecting) reports how each differs from it.
///
/// Directories are handled before their entries: once a directory is owned by
/// root without write bits (or immutable), nobody but root can add, remove or
/// rename names in it, so the names read from it afterwards are the files the
/// engine then opens. It walks into a directory only in that state.
/// Entries found that were never recorded (created while the lock was being
/// applied) are recorded, and saved, before they are changed.
struct LockApplier: TreeVisitor {
    enum Mode { case lock, inspect }

    let mode: Mode
    let device: UInt64
    let fileSystem: String
    let policy: LockPolicy
    let hooks: LockEngineHooks
    /// Saves the whole entry list, after entries were recorded late.
    let persist: ([LockedEntry]) throws -> Void
    var entries: [LockedEntry]
    var index: [String: Int]
    var coverage: EntryCoverage
    var findings: [String] = []
    /// Why the lock does not hold; empty when every entry is locked.
    var unenforcedReasons: [String] = []
    var flagsSupported = true
    /// Set right after the entries were recorded: then a regular file whose
    /// name still leads to the recorded inode is the file recorded, and its
    /// recorded status stands in for an `fstat`.
    var trustsRecordedStatus = false

    init(mode: Mode, entries: [LockedEntry], root: WalkDirectory, policy: LockPolicy, hooks: LockEngineHooks,
         persist: @escaping ([LockedEntry]) throws -> Void) {
        self.mode = mode
        self.device = root.status.device
        self.fileSystem = (try? root.descriptor.fileSystemType().description) ?? "unknown"
        self.policy = policy
        self.hooks = hooks
        self.persist = persist
        self.entries = entries
        self.coverage = EntryCoverage(count: entries.count)
        self.index = entries.positionsByPath()
    }

    /// Handles the app directory itself.
    /// - Returns: whether its entries may be walked.
    mutating func begin(with root: WalkDirectory) throws -> Bool {
        if let error = try root.missingFlagSupport() { noteFlagsUnsupported(error) }
        return try handleOpened(root.descriptor, status: root.status, path: "") != nil
    }

    /// Recorded entries that were not found where the walk looked.
    var missingEntries: [String] { coverage.missing(in: entries) }

    /// After a locking walk: forgets entries the child removed before their
    /// directory was frozen (nothing of the lock's is left on them), so an
    /// unlock does not report them missing.
    mutating func dropMissingEntries() throws {
        let missing = Set(missingEntries)
        guard mode == .lock, !missing.isEmpty else { return }
        entries.removeAll { missing.contains($0.relativePath) }
        try persist(entries)
    }

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
        if trustsRecordedStatus, type == .regular, let position = index[path],
           entries[position].kind == .regular, entries[position].inode == entry.inode {
            // The directory is frozen, so the name leads to the inode its
            // listing shows. A mount over the name would have been recorded
            // with the mounted file's inode (statx crosses mounts), not this one.
            let descriptor: FileDescriptor
            do {
                descriptor = try parent.descriptor.openChild(entry.name, flags: AppDirectory.fileFlags)
            } catch {
                throw LockError.system(path: path, error)
            }
            coverage.markSeen(position)
            _ = try settle(descriptor, status: entries[position].recordedStatus, entry: entries[position])
            return nil
        }
        let flags = type == .directory ? AppDirectory.directoryFlags : AppDirectory.fileFlags
        let descriptor: FileDescriptor
        let status: FileStatus
        do {
            descriptor = try parent.descriptor.openChild(entry.name, flags: flags)
            status = try descriptor.status()
        } catch where EntryRecorder.isRace(error) {
            findings.append("\(path): changed while it was being locked; left as it is")
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
        return try handleOpened(descriptor, status: status, path: path)
    }

    // MARK: - Entries with a descriptor: directories and regular files

    private mutating func handleOpened(_ descriptor: FileDescriptor, status: FileStatus, path: String) throws -> WalkDirectory? {
        guard status.device == device else {
            findings.append("\(path): on another filesystem (a mount point); left unlocked")
            return nil
        }
        var position = recorded(path, status)
        if position == nil { position = try adopt(status, path: path, opened: descriptor) }
        guard let position else {
            if status.type == .directory { coverage.skip(path) }
            return nil
        }
        coverage.markSeen(position)
        let frozen = try settle(descriptor, status: status, entry: entries[position])
        guard status.type == .directory else { return nil }
        guard frozen else {
            coverage.skip(path)
            return nil
        }
        return WalkDirectory(descriptor: descriptor, relativePath: path, status: status)
    }

    /// Locks one open entry, or reports how it differs from locked.
    /// - Returns: whether the entry is now frozen: nobody but root can change it.
    private mutating func settle(_ descriptor: FileDescriptor, status: FileStatus, entry: LockedEntry) throws -> Bool {
        let path = entry.relativePath
        var flags: FileFlags?
        if flagsSupported {
            do {
                flags = try descriptor.flags()
            } catch where error.meansFlagsUnsupported {
                noteFlagsUnsupported(error)
            } catch {
                fail(path, error)
                return false
            }
        }
        let immutable = flags?.contains(.immutable) ?? false
        let ownershipLocked = entry.hasLockedOwnership(status)
        if mode == .inspect {
            if !ownershipLocked { findings.append(drift(path, status, entry)) }
            if flags != nil, !immutable { findings.append("\(path): not immutable") }
            return status.isFrozen(immutable: immutable)
        }
        if immutable, ownershipLocked || entry.wasImmutable { return true }

        try hooks.beforeChange(path)
        do {
            if var lifted = flags, immutable {
                // Immutable, but not with the owner and mode the lock leaves
                // (changed by hand): lift the flag to put them right.
                lifted.remove(.immutable)
                try descriptor.setFlags(lifted)
            }
            let chown = status.uid != entry.lockedUID || status.gid != entry.gid
            if chown { try descriptor.changeOwner(uid: entry.lockedUID, gid: entry.gid) }
            // After chown too: the kernel clears setuid and setgid on an owner change.
            if chown || status.permissions != entry.lockedMode { try descriptor.changeMode(entry.lockedMode) }
        } catch {
            fail(path, error, changingOwner: true)
            return false
        }
        let frozenByOwnership = entry.lockedUID == 0 && entry.lockedMode & LockedEntry.writeBits == 0
        guard var flags, flagsSupported else { return frozenByOwnership }
        flags.insert(.immutable)
        do {
            try descriptor.setFlags(flags)
            return true
        } catch where error.meansFlagsUnsupported {
            noteFlagsUnsupported(error)
        } catch {
            fail(path, error)
        }
        return frozenByOwnership
    }

    // MARK: - Entries without a descriptor: symbolic links, FIFOs, sockets

    /// Locks a link or special file by name. Safe only because its directory
    /// is frozen: the name cannot be swapped between the stat and the change.
    private mutating func handleNamed(_ name: FileName, status: FileStatus, path: String, in parent: WalkDirectory) throws {
        guard status.device == device else {
            findings.append("\(path): on another filesystem (a mount point); left unlocked")
            return
        }
        var position = recorded(path, status)
        if position == nil { position = try adopt(status, path: path, opened: nil) }
        guard let position else { return }
        coverage.markSeen(position)
        let entry = entries[position]
        guard !entry.hasLockedOwnership(status) else { return }
        guard mode == .lock else {
            findings.append(drift(path, status, entry))
            return
        }
        try hooks.beforeChange(path)
        do {
            if status.uid != entry.lockedUID || status.gid != entry.gid {
                try parent.descriptor.changeOwner(of: name, uid: entry.lockedUID, gid: entry.gid)
            }
            if entry.kind == .other { try parent.descriptor.changeMode(of: name, entry.lockedMode) }
        } catch {
            fail(path, error, changingOwner: true)
        }
    }
}

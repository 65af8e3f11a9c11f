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
    private(set) var entries: [LockedEntry]
    private var index: [String: Int]
    private var coverage: EntryCoverage
    private(set) var findings: [String] = []
    /// Why the lock does not hold; empty when every entry is locked.
    private(set) var unenforcedReasons: [String] = []
    private var flagsSupported = true
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
        var index: [String: Int] = [:]
        index.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() { index[entry.relativePath] = position }
        self.index = index
    }

    /// Handles the app directory itself.
    /// - Returns: whether its entries may be walked.
    mutating func begin(with root: WalkDirectory) throws -> Bool {
        do {
            _ = try root.descriptor.flags()
        } catch where error.meansFlagsUnsupported {
            noteFlagsUnsupported(error)
        } catch {
            throw LockError.system(path: "", error)
        }
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
        var type = entry.type
        var named: FileStatus?
        if type == nil || type == .symbolicLink || type == .other {
            guard let status = try status(of: entry.name, in: parent, path: path) else { return nil }
            type = status.type
            named = status
        }
        if let named, type == .symbolicLink || type == .other {
            try handleNamed(entry.name, status: named, path: path, in: parent)
            return nil
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

    // MARK: - Recording late entries

    /// The recorded entry for `path`, if it is this very file.
    private func recorded(_ path: String, _ status: FileStatus) -> Int? {
        guard let position = index[path], entries[position].isSameFile(status) else { return nil }
        return position
    }

    /// Records an entry the journal does not have (and, for a directory,
    /// everything below it), saves the journal, and returns its position.
    /// Returns nil for an entry that must be left alone, and when inspecting.
    private mutating func adopt(_ status: FileStatus, path: String, opened: FileDescriptor?) throws -> Int? {
        if let refusal = policy.refusal(for: status) {
            findings.append("\(path): \(refusal)")
            return nil
        }
        guard mode == .lock else {
            if let replaced = index[path] {
                coverage.markSeen(replaced)
                findings.append("\(path): replaced since the lock (another file now has this name)")
            } else {
                findings.append("\(path): not recorded by the lock")
            }
            return nil
        }
        var late: [LockedEntry]
        if let opened, status.type == .directory {
            let directory = WalkDirectory(descriptor: opened, relativePath: path, status: status)
            late = try EntryRecorder.record(directory, device: device, policy: policy, flagsSupported: flagsSupported)
        } else {
            let immutable = try opened.map { descriptor throws(LockError) in
                flagsSupported ? try EntryRecorder.isImmutable(descriptor, path: path) : false
            } ?? false
            late = [LockedEntry(relativePath: path, status: status, wasImmutable: immutable)]
        }
        for entry in late {
            if let position = index[entry.relativePath] {
                entries[position] = entry
            } else {
                index[entry.relativePath] = entries.count
                entries.append(entry)
            }
        }
        try persist(entries)
        return index[path]
    }

    // MARK: - Reporting

    private func status(of name: FileName, in parent: WalkDirectory, path: String) throws -> FileStatus? {
        do {
            return try parent.descriptor.status(of: name)
        } catch where error.rawValue == ENOENT {
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
    }

    private func drift(_ path: String, _ status: FileStatus, _ entry: LockedEntry) -> String {
        let now = LockedEntry.describe(uid: status.uid, gid: status.gid, mode: status.permissions)
        let locked = LockedEntry.describe(uid: entry.lockedUID, gid: entry.gid, mode: entry.lockedMode)
        return "\(path.isEmpty ? "app directory" : path): \(now), locked is \(locked)"
    }

    private mutating func noteFlagsUnsupported(_ error: Errno) {
        guard flagsSupported else { return }
        flagsSupported = false
        guard mode == .lock else { return }
        unenforcedReasons.append("filesystem \(fileSystem) does not support the immutable attribute (\(error))")
    }

    private mutating func fail(_ path: String, _ error: Errno, changingOwner: Bool = false) {
        let reason: String
        if path.isEmpty, changingOwner, error.rawValue == EPERM {
            reason = "filesystem \(fileSystem) does not let root change ownership (root squashing?): \(error)"
        } else if error.rawValue == EROFS {
            reason = "filesystem \(fileSystem) is mounted read-only"
        } else {
            reason = "\(path.isEmpty ? "app directory" : path): could not be locked: \(error)"
        }
        findings.append(reason)
        if mode == .lock { unenforcedReasons.append(reason) }
    }
}

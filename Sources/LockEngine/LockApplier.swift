#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Brings every recorded entry of an app directory to its locked state
/// (immutable), or, inspecting, reports how each differs from it.
///
/// Directories are handled before their entries: once a directory is
/// immutable, nobody can add, remove or rename names in it, so the names read
/// from it afterwards are the files the engine then opens. It walks into a
/// directory only in that state. Entries found that were never recorded
/// (created while the lock was being applied) are journaled in batches before
/// they are changed (see `LockApplier+LateEntries.swift`).
///
/// A lock is a fact only if nothing can still change the app: every entry
/// that cannot be locked, every file a process opened for writing before the
/// lock, every link out of the app and every filesystem mounted inside it is
/// a reason the lock is `unenforced` instead.
struct LockApplier: TreeVisitor {
    enum Mode { case lock, inspect }

    let mode: Mode
    let device: UInt64
    let fileSystem: String
    let policy: LockPolicy
    let hooks: LockEngineHooks
    let limits: LockEngine.Limits
    /// Adds late entries to the journal, in one transaction per call.
    let journalLate: ([LockedEntry]) throws -> Void
    /// Replaces the journal's whole entry list.
    let journalAll: ([LockedEntry]) throws -> Void
    var entries: [LockedEntry]
    var index: [String: Int]
    var coverage: EntryCoverage
    var findings: [String] = []
    /// Why the lock does not hold; empty when every entry is locked.
    var unenforcedReasons: [String] = []
    var flagsSupported = true
    /// Set right after the entries were recorded: then a regular file whose
    /// name still leads to the recorded inode is the file recorded, and needs
    /// no `fstat` of its own.
    var trustsRecordedStatus = false
    /// Late entries waiting to be journaled, and how many were taken.
    var late = LateEntries()
    /// Recorded symbolic links, checked once the whole tree is frozen.
    var links: [String] = []
    /// Entries recorded as immutable before the lock whose flag someone
    /// lifted since, and this pass set again: the flag is now the lock's own,
    /// so its unlock clears it (see ``LockEngine`` `adopt`).
    var adopted: Set<String> = []
    /// Files found open for writing, whose writers are named after the walk.
    var heldOpen: [HeldOpenFile] = []

    init(mode: Mode, entries: [LockedEntry], root: WalkDirectory, policy: LockPolicy, hooks: LockEngineHooks,
         limits: LockEngine.Limits,
         journalLate: @escaping ([LockedEntry]) throws -> Void = { _ in },
         journalAll: @escaping ([LockedEntry]) throws -> Void = { _ in }) {
        self.mode = mode
        self.device = root.status.device
        self.fileSystem = (try? root.descriptor.fileSystemType().description) ?? "unknown"
        self.policy = policy
        self.hooks = hooks
        self.limits = limits
        self.journalLate = journalLate
        self.journalAll = journalAll
        self.entries = entries
        self.coverage = EntryCoverage(count: entries.count)
        self.index = entries.positionsByPath()
    }

    /// Handles the app directory itself.
    /// - Returns: whether its entries may be walked.
    mutating func begin(with root: WalkDirectory) throws -> Bool {
        if let error = try root.missingFlagSupport() {
            noteFlagsUnsupported(error)
            return false
        }
        return try handleOpened(root.descriptor, status: root.status, path: "") != nil
    }

    /// After the walk: journals and locks the late entries still waiting, names
    /// the writers found, then checks that no link leads out of the app.
    mutating func finish(root: WalkDirectory) throws {
        try flushLate()
        nameWriters()
        for path in links {
            guard let escape = LinkEscape.check(path, in: root) else { continue }
            unenforced("\(path): \(escape); what it points to is not protected")
        }
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
        try journalAll(entries)
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
            guard let descriptor = try open(entry.name, type: type, path: path, in: parent) else { return nil }
            coverage.markSeen(position)
            _ = try settle(descriptor, status: nil, entry: entries[position])
            return nil
        }
        guard let descriptor = try open(entry.name, type: type, path: path, in: parent) else { return nil }
        let status: FileStatus
        do {
            status = try descriptor.status()
        } catch {
            throw LockError.system(path: path, error)
        }
        return try handleOpened(descriptor, status: status, path: path, name: entry.name, parent: parent)
    }

    /// Opens a directory or regular file of `parent`; nil when it cannot be
    /// (gone or swapped, or held by another process's lease: both reported).
    mutating func open(_ name: FileName, type: FileStatus.FileType, path: String, in parent: WalkDirectory) throws -> FileDescriptor? {
        do {
            return try parent.descriptor.openChild(
                name, flags: type == .directory ? AppDirectory.directoryFlags : AppDirectory.fileFlags)
        } catch where EntryRecorder.isRace(error) {
            return nil
        } catch where error.rawValue == EAGAIN {
            // A lease another process holds (only a file's owner can take one).
            unenforced("\(path): held by another process's lease, so it could not be opened")
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
    }

    // MARK: - Entries with a descriptor: directories and regular files

    private mutating func handleOpened(
        _ descriptor: FileDescriptor, status: FileStatus, path: String,
        name: FileName? = nil, parent: WalkDirectory? = nil
    ) throws -> WalkDirectory? {
        guard status.device == device else {
            unenforced("\(path): another filesystem is mounted there, and the lock does not cross into it")
            if status.type == .directory { coverage.skip(path) }
            return nil
        }
        guard let position = recorded(path, status) else {
            if let name, let parent {
                try noteLate(status, path: path, name: name, parent: parent, opened: descriptor)
            }
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

    /// Makes one open entry immutable, or reports how it differs from that,
    /// and checks a regular file for writers that opened it before.
    /// - Returns: whether the entry is now frozen: immutable.
    mutating func settle(_ descriptor: FileDescriptor, status: FileStatus?, entry: LockedEntry) throws -> Bool {
        let path = describe(entry.relativePath)
        guard flagsSupported else { return false }
        var flags: FileFlags
        do {
            flags = try descriptor.flags()
        } catch where error.meansFlagsUnsupported {
            noteFlagsUnsupported(error)
            return false
        } catch {
            unenforced("\(path): its attributes could not be read: \(error)")
            return false
        }
        if let status, !entry.hasOriginalOwnership(status) {
            findings.append("\(path): \(current(status)), \(LockedEntry.describe(uid: entry.uid, gid: entry.gid, mode: entry.mode)) when locked")
            // Changed while someone had lifted the attribute: a repair puts
            // back what was recorded before the attribute goes on again.
            if mode == .lock, !flags.contains(.immutable) {
                try hooks.beforeChange(entry.relativePath)
                do {
                    let chown = status.uid != entry.uid || status.gid != entry.gid
                    if chown { try descriptor.changeOwner(uid: entry.uid, gid: entry.gid) }
                    // After chown too: the kernel clears setuid and setgid on an owner change.
                    if chown || status.permissions != entry.mode { try descriptor.changeMode(entry.mode) }
                } catch {
                    unenforced("\(path): its recorded owner and mode could not be put back: \(error)")
                    return false
                }
            }
        }
        if !flags.contains(.immutable) {
            guard mode == .lock else {
                findings.append("\(path): not immutable")
                return false
            }
            try hooks.beforeChange(entry.relativePath)
            flags.insert(.immutable)
            do {
                try descriptor.setFlags(flags)
                if entry.wasImmutable { adopted.insert(entry.relativePath) }
            } catch where error.meansFlagsUnsupported {
                noteFlagsUnsupported(error)
                return false
            } catch where error.rawValue == EPERM {
                // Not the filesystem's limit but the Guard's own (a unit or
                // drop-in without the capabilities): an unenforced lock would
                // approve an app nothing protects, so the lock fails instead.
                throw LockError.attributeNotPermitted(path: path, error)
            } catch {
                unenforced("\(path): could not be made immutable: \(error)")
                return false
            }
        }
        if entry.kind == .regular { checkWriters(descriptor, entry: entry) }
        return true
    }

    /// An immutable file refuses new writers, but one opened before keeps
    /// writing on filesystems that check only at open (XFS, btrfs, tmpfs),
    /// and a shared writable mapping writes on any: either means the file
    /// can still change.
    private mutating func checkWriters(_ descriptor: FileDescriptor, entry: LockedEntry) {
        let path = describe(entry.relativePath)
        switch descriptor.writers() {
        case .none:
            break
        case .present:
            noteHeldOpen(path: path, entry: entry)
        case .unknown(let error):
            unenforced("\(path): cannot tell whether a process still has it open for writing (\(error))")
        }
    }

    // MARK: - Entries without a descriptor: symbolic links, FIFOs, sockets

    /// Notes a link or special file. Nothing on it changes: its frozen
    /// directory keeps it from being removed, renamed or replaced.
    private mutating func handleNamed(_ name: FileName, status: FileStatus, path: String, in parent: WalkDirectory) throws {
        guard let position = recorded(path, status) else {
            try noteLate(status, path: path, name: name, parent: parent, opened: nil)
            return
        }
        coverage.markSeen(position)
        let entry = entries[position]
        if !entry.hasOriginalOwnership(status) {
            findings.append("\(path): \(current(status)), \(LockedEntry.describe(uid: entry.uid, gid: entry.gid, mode: entry.mode)) when locked")
        }
        if entry.kind == .symlink { links.append(path) }
    }

    // MARK: - Reporting

    /// Records why the lock does not hold (a finding too, when inspecting).
    mutating func unenforced(_ reason: String) {
        findings.append(reason)
        if mode == .lock { unenforcedReasons.append(reason) }
    }

    mutating func noteFlagsUnsupported(_ error: Errno) {
        guard flagsSupported else { return }
        flagsSupported = false
        unenforced("filesystem \(fileSystem) does not support the immutable attribute (\(error)), so nothing can be locked on it")
    }

    func current(_ status: FileStatus) -> String {
        "now " + LockedEntry.describe(uid: status.uid, gid: status.gid, mode: status.permissions)
    }

    func describe(_ path: String) -> String { path.isEmpty ? "app directory" : path }
}

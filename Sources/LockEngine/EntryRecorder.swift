#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Records a directory and everything under it as it is now, before the lock
/// changes anything: the journal must hold the originals first.
///
/// Changes nothing. Entries the child swaps while the walk runs are skipped
/// here; the locking pass finds and records them once their directory can no
/// longer change.
struct EntryRecorder: TreeVisitor {
    /// The filesystem of the app directory; nothing on another one is recorded.
    let device: UInt64
    let policy: LockPolicy
    /// False when the filesystem has no inode flags: nothing can be immutable.
    let flagsSupported: Bool
    /// How many entries one recording may hold; past it the lock fails.
    let limit: Int
    private(set) var entries: [LockedEntry] = []
    /// The child's regular files with more than one link: path and link count, by inode.
    private var linked: [UInt64: (path: String, links: UInt64)] = [:]

    /// Records `directory` itself and every entry below it.
    /// - Throws: ``LockError/tooManyEntries(limit:)`` past `limit` entries;
    ///   ``LockError/linkedOutside(path:links:inside:)`` for a file of the
    ///   child's with more links than it has names inside the app, unless
    ///   `linksOutsideAllowed`.
    static func record(
        _ directory: WalkDirectory, device: UInt64, policy: LockPolicy, flagsSupported: Bool,
        limit: Int, linksOutsideAllowed: Bool = false
    ) throws -> [LockedEntry] {
        var recorder = EntryRecorder(device: device, policy: policy, flagsSupported: flagsSupported, limit: limit)
        let immutable = flagsSupported ? try isImmutable(directory.descriptor, path: directory.relativePath) : false
        recorder.entries.append(
            LockedEntry(relativePath: directory.relativePath, status: directory.status, wasImmutable: immutable))
        try TreeWalk.walk(from: directory, visitor: &recorder)
        if !linksOutsideAllowed { try recorder.refuseLinksOutside() }
        return recorder.entries
    }

    /// A file of the child's whose other names lie outside the app would be
    /// frozen, and freed, for whatever those names belong to as well (another
    /// app's program, say): refused. Names inside the app are counted, so an
    /// app that links its own files is locked as usual. A link made after
    /// this count and before the file is frozen makes it no worse: the
    /// journal's check of other locks still refuses a second app over it.
    private func refuseLinksOutside() throws(LockError) {
        guard !linked.isEmpty else { return }
        var inside: [UInt64: Int] = [:]
        for entry in entries where entry.kind == .regular && linked[entry.inode] != nil {
            inside[entry.inode, default: 0] += 1
        }
        for (inode, file) in linked.sorted(by: { $0.value.path < $1.value.path }) {
            let names = inside[inode] ?? 0
            if UInt64(names) < file.links { throw .linkedOutside(path: file.path, links: file.links, inside: names) }
        }
    }

    mutating func visit(_ entry: DirectoryEntry, path: String, in parent: WalkDirectory) throws -> WalkDirectory? {
        let found: ExtendedStatus
        do {
            found = try parent.descriptor.extendedStatus(of: entry.name)
        } catch where Self.isRace(error) {
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
        let status = found.status
        guard status.device == device, policy.refusal(for: status) == nil else { return nil }

        var opened: WalkDirectory?
        var immutable = found.isImmutable ?? false
        if status.type == .directory || (found.isImmutable == nil && flagsSupported && status.type == .regular) {
            let flags = status.type == .directory ? AppDirectory.directoryFlags : AppDirectory.fileFlags
            guard let descriptor = try open(entry.name, flags: flags, in: parent, path: path),
                  let current = try? descriptor.status(), current.isSameFile(as: status)
            else { return nil }
            if found.isImmutable == nil, flagsSupported { immutable = try Self.isImmutable(descriptor, path: path) }
            if status.type == .directory {
                opened = WalkDirectory(descriptor: descriptor, relativePath: path, status: current)
            }
        }
        guard entries.count < limit else { throw LockError.tooManyEntries(limit: limit) }
        if status.type == .regular, status.linkCount > 1, status.uid == policy.childUID, linked[status.inode] == nil {
            linked[status.inode] = (path, status.linkCount)
        }
        entries.append(LockedEntry(relativePath: path, status: status, wasImmutable: immutable))
        return opened
    }

    private func open(_ name: FileName, flags: CInt, in parent: WalkDirectory, path: String) throws -> FileDescriptor? {
        do {
            return try parent.descriptor.openChild(name, flags: flags)
        } catch where Self.isRace(error) || error.rawValue == EAGAIN {
            // EAGAIN: a lease holds the file; the locking pass reports it.
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
    }

    /// Whether the open entry is immutable; false where the filesystem has no
    /// flags. Any other failure stops the lock: guessing could later clear a
    /// flag an administrator set.
    static func isImmutable(_ descriptor: FileDescriptor, path: String) throws(LockError) -> Bool {
        do {
            return try descriptor.flags().contains(.immutable)
        } catch where error.meansFlagsUnsupported {
            return false
        } catch {
            throw .system(path: path, error)
        }
    }

    /// Errors that mean the entry changed under the walk (gone, or swapped for
    /// a link or another kind of file), not that the walk failed.
    static func isRace(_ error: Errno) -> Bool {
        [ENOENT, ELOOP, ENOTDIR, ENXIO, EISDIR].contains(error.rawValue)
    }
}

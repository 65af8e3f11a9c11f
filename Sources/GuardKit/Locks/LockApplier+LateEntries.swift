#if canImport(Glibc)
import Glibc
#endif
import SystemKit

// Entries the journal does not have yet, and how the applier words what it finds.
extension LockApplier {
    /// The recorded entry for `path`, if it is this very file.
    func recorded(_ path: String, _ status: FileStatus) -> Int? {
        guard let position = index[path], entries[position].isSameFile(status) else { return nil }
        return position
    }

    /// Records an entry the journal does not have (and, for a directory,
    /// everything below it), saves the journal, and returns its position.
    /// Returns nil for an entry that must be left alone, and when inspecting.
    mutating func adopt(_ status: FileStatus, path: String, opened: FileDescriptor?) throws -> Int? {
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

    func drift(_ path: String, _ status: FileStatus, _ entry: LockedEntry) -> String {
        let now = LockedEntry.describe(uid: status.uid, gid: status.gid, mode: status.permissions)
        let locked = LockedEntry.describe(uid: entry.lockedUID, gid: entry.gid, mode: entry.lockedMode)
        return "\(path.isEmpty ? "app directory" : path): \(now), locked is \(locked)"
    }

    mutating func noteFlagsUnsupported(_ error: Errno) {
        guard flagsSupported else { return }
        flagsSupported = false
        guard mode == .lock else { return }
        unenforcedReasons.append("filesystem \(fileSystem) does not support the immutable attribute (\(error))")
    }

    mutating func fail(_ path: String, _ error: Errno, changingOwner: Bool = false) {
        let reason: String
        if path.isEmpty, changingOwner, error.rawValue == EPERM {
            // Root-squashed NFS, or an append-only flag on the directory.
            reason = "root may not change the owner of the app directory on filesystem \(fileSystem): \(error)"
        } else if error.rawValue == EROFS {
            reason = "filesystem \(fileSystem) is mounted read-only"
        } else {
            reason = "\(path.isEmpty ? "app directory" : path): could not be locked: \(error)"
        }
        findings.append(reason)
        if mode == .lock { unenforcedReasons.append(reason) }
    }
}

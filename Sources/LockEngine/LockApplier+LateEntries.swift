#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Entries that appeared after the recording pass, found in directories that
/// are already frozen, so their names can no longer change.
///
/// Each must be journaled before it is changed; they are journaled in
/// batches (one transaction each) rather than one by one, so a child who
/// sprays files into the tree while it is being locked costs the lock a few
/// transactions, not one per file. Past ``LockEngine/Limits/lateEntries`` the
/// rest are left as they are and the lock is unenforced.
struct LateEntries {
    struct Pending {
        let entry: LockedEntry
        /// The frozen directory holding it, and its name there.
        let parent: WalkDirectory
        let name: FileName
    }

    var pending: [Pending] = []
    /// Late entries journaled so far.
    var taken = 0
    var overflowed = false
    var flushing = false
}

extension LockApplier {
    /// The recorded entry for `path`, if it is this very file.
    func recorded(_ path: String, _ status: FileStatus) -> Int? {
        guard let position = index[path], entries[position].isSameFile(status) else { return nil }
        return position
    }

    /// An entry the journal does not have: refused, reported (inspecting),
    /// or queued to be journaled and locked.
    mutating func noteLate(_ status: FileStatus, path: String, name: FileName, parent: WalkDirectory,
                           opened: FileDescriptor?) throws {
        if let refusal = policy.refusal(for: status) {
            unenforced("\(path): \(refusal)")
            return
        }
        guard mode == .lock else {
            if let replaced = index[path] {
                coverage.markSeen(replaced)
                findings.append("\(path): replaced since the lock (another file now has this name)")
            } else {
                findings.append("\(path): not recorded by the lock")
            }
            return
        }
        // Every walk (unlock, verify) must reach what the lock takes.
        if status.type == .directory, path.utf8.count(where: { $0 == UInt8(ascii: "/") }) + 2 >= TreeWalk.depthLimit {
            unenforced("\(path): nests more than \(TreeWalk.depthLimit) directories deep; what is inside was left as it is")
            return
        }
        guard late.taken + late.pending.count < limits.lateEntries else {
            if !late.overflowed {
                late.overflowed = true
                unenforced("more than \(limits.lateEntries) entries appeared while the lock was being "
                    + "applied; the ones after that were left as they are")
            }
            return
        }
        var immutable = false
        if let opened, flagsSupported {
            immutable = try EntryRecorder.isImmutable(opened, path: path)
        }
        let entry = LockedEntry(relativePath: path, status: status, wasImmutable: immutable)
        late.pending.append(LateEntries.Pending(entry: entry, parent: parent, name: name))
        if late.pending.count >= limits.lateBatch { try flushLate() }
    }

    /// Journals the waiting late entries in one transaction, then locks them
    /// (walking into late directories, which may find more); repeats until
    /// none wait. Not re-entered: entries found meanwhile wait for the next round.
    mutating func flushLate() throws {
        guard mode == .lock, !late.flushing else { return }
        late.flushing = true
        defer { late.flushing = false }
        while !late.pending.isEmpty {
            let batch = late.pending
            late.pending = []
            late.taken += batch.count
            try journalLate(batch.map(\.entry))
            for item in batch {
                let path = item.entry.relativePath
                if let position = index[path] {
                    entries[position] = item.entry
                } else {
                    index[path] = entries.count
                    entries.append(item.entry)
                }
                if let position = index[path] { coverage.markSeen(position) }
            }
            for item in batch { try settleLate(item) }
        }
    }

    private mutating func settleLate(_ item: LateEntries.Pending) throws {
        let entry = item.entry
        switch entry.kind {
        case .symlink:
            links.append(entry.relativePath)
        case .other:
            break
        case .directory, .regular:
            let type: FileStatus.FileType = entry.kind == .directory ? .directory : .regular
            guard let descriptor = try open(item.name, type: type, path: entry.relativePath, in: item.parent) else { return }
            let status: FileStatus
            do {
                status = try descriptor.status()
            } catch {
                throw LockError.system(path: entry.relativePath, error)
            }
            // Its directory is frozen: the name still leads to what was journaled.
            guard entry.isSameFile(status) else { return }
            let frozen = try settle(descriptor, status: status, entry: entry)
            guard entry.kind == .directory else { return }
            guard frozen else {
                coverage.skip(entry.relativePath)
                return
            }
            try TreeWalk.walk(from: WalkDirectory(descriptor: descriptor, relativePath: entry.relativePath, status: status),
                              visitor: &self)
        }
    }
}

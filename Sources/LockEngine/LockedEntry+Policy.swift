import SystemKit

// What a lock does to one entry: it sets the immutable attribute
// (`FS_IMMUTABLE_FL`) on every directory and regular file, and nothing else.
//
// Owner, group and mode stay as they were, so the child still reads and runs
// its app exactly as before. The attribute is what stops the child: an
// immutable inode cannot be written, truncated, renamed, unlinked, linked,
// chmod-ed or chown-ed, by its owner or even by root, and only a process
// with `CAP_LINUX_IMMUTABLE` can clear it. A directory that is immutable can
// gain, lose or rename no entry, which is what protects symbolic links and
// special files inside it. An entry that was already immutable is left as it
// is, and an unlock never clears a flag the lock did not set.
extension LockedEntry {
    /// Records an entry as it is now.
    init(relativePath: String, status: FileStatus, wasImmutable: Bool) {
        self.init(
            relativePath: relativePath,
            kind: Kind(status.type),
            device: status.device,
            inode: status.inode,
            uid: status.uid,
            gid: status.gid,
            mode: status.permissions,
            wasImmutable: wasImmutable
        )
    }

    /// Whether the lock sets the immutable attribute on this entry: every
    /// directory and regular file (a link or special file has no attribute
    /// of its own; its frozen directory protects it).
    var takesFlag: Bool { kind == .directory || kind == .regular }

    /// Whether `status` has the owner, group and mode recorded before the lock.
    func hasOriginalOwnership(_ status: FileStatus) -> Bool {
        status.uid == uid && status.gid == gid && (kind == .symlink || status.permissions == mode)
    }

    /// Whether `status` describes this entry's file: same inode, same kind.
    func isSameFile(_ status: FileStatus) -> Bool {
        status.device == device && status.inode == inode && kind == Kind(status.type)
    }

    /// Owner, group and mode as one line, for reports.
    static func describe(uid: UInt32, gid: UInt32, mode: UInt32) -> String {
        "owner \(uid):\(gid) mode \(String(mode, radix: 8))"
    }
}

extension LockedEntry.Kind {
    init(_ type: FileStatus.FileType) {
        switch type {
        case .directory: self = .directory
        case .regular: self = .regular
        case .symbolicLink: self = .symlink
        case .other: self = .other
        }
    }
}

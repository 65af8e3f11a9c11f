import SystemKit

// What a lock does to one entry.
//
// Owner: root, so the child can no longer chmod, chown or replace it. The
// group is kept: group members keep the read and execute access they had, and
// only an owner can change a mode, so the group grants no way back in.
// Mode: every write bit cleared. The setuid bit is cleared on anything whose
// owner changes, since a child's setuid program would otherwise become a
// setuid-root one; setgid, sticky, read and execute bits are kept (the group
// does not change, so setgid grants nothing new). Nothing is ever added.
// An entry that was already immutable keeps its owner and mode: neither can
// change while the flag is set, and the Guard never clears a flag it did not set.
extension LockedEntry {
    /// Write bits for owner, group and others.
    static let writeBits: UInt32 = 0o222
    /// `S_ISUID` and `S_ISGID`.
    static let setIDBits: UInt32 = 0o6000

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

    /// The status this entry had when it was recorded.
    var recordedStatus: FileStatus {
        let type: UInt32 = switch kind {
        case .directory: 0o040000
        case .regular: 0o100000
        case .symlink: 0o120000
        case .other: 0
        }
        return FileStatus(device: device, inode: inode, mode: type | mode, uid: uid, gid: gid, linkCount: 1)
    }

    /// The owner the lock leaves.
    package var lockedUID: UInt32 { wasImmutable ? uid : 0 }

    /// The permission bits the lock leaves.
    package var lockedMode: UInt32 {
        if wasImmutable || kind == .symlink { return mode }
        var locked = mode & ~Self.writeBits
        if uid != 0 { locked &= ~0o4000 }
        return locked
    }

    /// Whether `status` has the owner, group and mode the lock leaves.
    func hasLockedOwnership(_ status: FileStatus) -> Bool {
        status.uid == lockedUID && status.gid == gid && (kind == .symlink || status.permissions == lockedMode)
    }

    /// Whether `status` has the owner, group and mode recorded before the lock.
    func hasOriginalOwnership(_ status: FileStatus) -> Bool {
        status.uid == uid && status.gid == gid && (kind == .symlink || status.permissions == mode)
    }

    /// Whether an unlock stopped between giving the owner back and the mode
    /// (the owner change may also have cleared setuid and setgid).
    func isHalfRestored(_ status: FileStatus) -> Bool {
        status.uid == uid && status.gid == gid
            && (status.permissions == lockedMode || status.permissions == lockedMode & ~Self.setIDBits)
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

extension FileStatus {
    /// Whether nobody but root can add, remove or rename names in this
    /// directory: owned by root with no write bit, or immutable.
    func isFrozen(immutable: Bool) -> Bool {
        immutable || (uid == 0 && permissions & LockedEntry.writeBits == 0)
    }
}

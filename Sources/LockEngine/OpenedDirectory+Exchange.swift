#if canImport(Glibc)
import Glibc
#endif
import SystemKit

// What swapping one version of an app for another needs of the folder that
// holds both: open a child folder by name without following a link, read a
// name's status, swap two names, and set or clear the immutable attribute
// of a version's top folder, each by descriptor.
extension OpenedDirectory {
    /// Opens the folder `name` directly inside this one, never through a link.
    /// - Throws: ``LockError/symbolicLinkInPath(_:)``, ``LockError/notADirectory(_:)``,
    ///   ``LockError/directoryNotFound(_:)``, or the system's error.
    package func openDirectory(_ name: String) throws(LockError) -> OpenedDirectory {
        let path = AppDirectory.absolute(self.path, name)
        let fileName = FileName(name)
        let child: FileDescriptor
        do {
            child = try descriptor.openChild(fileName, flags: AppDirectory.directoryFlags)
        } catch {
            switch error.rawValue {
            case ENOENT: throw .directoryNotFound(path)
            case ENOTDIR, ELOOP:
                if let status = try? descriptor.status(of: fileName), status.type == .symbolicLink {
                    throw .symbolicLinkInPath(path)
                }
                throw .notADirectory(path)
            default: throw .system(path: path, error)
            }
        }
        do {
            return OpenedDirectory(WalkDirectory(descriptor: child, relativePath: "", status: try child.status()), path: path)
        } catch {
            throw .system(path: path, error)
        }
    }

    /// The status of `name` directly inside this folder, not following a link.
    package func status(ofChild name: String) throws(Errno) -> FileStatus {
        try descriptor.status(of: FileName(name))
    }

    /// Swaps the folders `first` and `second` inside this one in one step.
    package func exchange(_ first: String, _ second: String) throws(Errno) {
        try descriptor.exchange(FileName(first), FileName(second))
    }

    /// Whether this folder itself has the immutable attribute.
    package func isImmutable() throws(Errno) -> Bool {
        try descriptor.flags().contains(.immutable)
    }

    /// Sets or clears the immutable attribute of this folder itself, and no other flag.
    package func setImmutable(_ immutable: Bool) throws(Errno) {
        var flags = try descriptor.flags()
        if immutable { flags.insert(.immutable) } else { flags.remove(.immutable) }
        try descriptor.setFlags(flags)
    }
}

// What keeps a version's top folder out of the child's reach while it is
// not immutable for a swap: its names, owner and mode as they are now, and
// a name moved out of it.
extension OpenedDirectory {
    /// The names directly inside this folder now.
    package func names() throws(Errno) -> Set<FileName> {
        Set(try descriptor.readDirectory().map(\.name))
    }

    /// This folder's status now (``status`` is as it was when opened).
    package func currentStatus() throws(Errno) -> FileStatus {
        try descriptor.status()
    }

    /// Gives this folder itself `uid` and `gid` (`fchown(2)`), then, when
    /// given, the permission bits `permissions` (`fchmod(2)`, which also sets
    /// an ACL's mask).
    package func setOwner(uid: UInt32, gid: UInt32, permissions: UInt32? = nil) throws(Errno) {
        try descriptor.changeOwner(uid: uid, gid: gid)
        if let permissions { try descriptor.changeMode(permissions) }
    }

    /// Moves `name`, directly inside this folder, to `newName` in `folder`,
    /// never replacing anything there.
    /// - Throws: ``Errno``; `EEXIST` when `newName` is taken.
    package func move(_ name: FileName, to folder: OpenedDirectory, as newName: FileName) throws(Errno) {
        try descriptor.move(name, to: folder.descriptor, as: newName)
    }
}

extension OpenedDirectory {
    /// The same folder on a descriptor of its own, for a reader outside the
    /// lock engine (an update's signature check, say).
    package func reopened() throws(Errno) -> FileDescriptor {
        try descriptor.reopenDirectory()
    }
}

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

extension OpenedDirectory {
    /// The same folder on a descriptor of its own, for a reader outside the
    /// lock engine (an update's signature check, say).
    package func reopened() throws(Errno) -> FileDescriptor {
        try descriptor.reopenDirectory()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A directory's device and inode: which object it is, whatever its path.
package struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    package init(_ status: FileStatus) {
        self.init(device: status.device, inode: status.inode)
    }

    package var description: String { "device \(device) inode \(inode)" }
}

/// An app directory held open from the moment it was identified, so that
/// what is approved and locked is that very directory, wherever the child
/// moves it and whatever it puts at its old path meanwhile.
///
/// Immutable once made; its descriptor is only ever used as the directory
/// of `openat(2)` calls, which are safe from any thread, and each walk gets
/// a fresh description of its own (``walkRoot()``).
package final class OpenedDirectory: @unchecked Sendable {
    let descriptor: FileDescriptor
    /// The directory's status when it was opened.
    package let status: FileStatus
    /// The path it was opened by.
    package let path: String

    init(_ directory: WalkDirectory, path: String) {
        descriptor = directory.descriptor
        status = directory.status
        self.path = path
    }

    /// Opens `path` one component at a time, never through a symbolic link.
    /// - Throws: ``LockError`` naming the component that is a link, is not a
    ///   directory, or does not exist.
    package static func open(_ path: String) throws(LockError) -> OpenedDirectory {
        OpenedDirectory(try AppDirectory.open(path), path: try AppDirectory.normalized(path))
    }

    /// Why this cannot be an app directory of user `uid`, or nil when it can:
    /// it must be theirs (or the child could have another user's folder, or a
    /// shared one such as `/tmp`, locked as its app) and not writable by everyone.
    package func ownershipProblem(uid: UInt32) -> String? {
        if status.uid != uid { return "it belongs to uid \(status.uid), not to the app's user (uid \(uid))" }
        if status.permissions & 0o002 != 0 { return "anyone may write to it (mode \(String(status.permissions, radix: 8)))" }
        return nil
    }

    /// The directory's device and inode.
    package var identity: FileIdentity { FileIdentity(status) }

    /// The directory `identity`: at `path` if it is still there, else found
    /// again under each of `roots`, then under the parent of `path`, each
    /// search bounded in depth and never through a link.
    /// - Throws: ``LockError/directoryMissing(user:appID:lastPath:)`` naming
    ///   `user` and `appID` when it is nowhere to be found.
    package static func find(_ identity: FileIdentity, lastSeenAt path: String, under roots: [String],
                             user: String, appID: String) throws(LockError) -> OpenedDirectory {
        if let directory = try? open(path), directory.identity == identity { return directory }
        for root in roots + [AppDirectory.parent(of: path)] {
            guard let found = DirectorySearch.find(device: identity.device, inode: identity.inode, under: root),
                  let directory = try? open(found), directory.identity == identity else { continue }
            return directory
        }
        throw .directoryMissing(user: user, appID: appID, lastPath: path)
    }

    /// The status of `relativePath` below the directory, opening each
    /// component without following a link; nil when there is no such file.
    package func status(of relativePath: String) -> FileStatus? {
        let components = relativePath.split(separator: "/").map(String.init)
        guard let last = components.last else { return status }
        var current = descriptor
        for component in components.dropLast() {
            guard let next = try? current.openChild(FileName(component), flags: AppDirectory.directoryFlags) else { return nil }
            current = next
        }
        return try? current.status(of: FileName(last))
    }

    /// Opens the regular file `name` directly inside the directory for reading,
    /// never through a link and without waiting on a FIFO.
    package func openFile(_ name: String) -> FileDescriptor? {
        try? descriptor.openChild(FileName(name), flags: AppDirectory.fileFlags)
    }

    /// The file at `relativePath` below the directory, for running it: each
    /// folder opened without following a link, the file itself as an
    /// `O_PATH` descriptor of the very file there (a link is refused), so
    /// that what runs is this directory's file whatever the child moves or
    /// renames above it. nil when there is no such file.
    package func openProgram(_ relativePath: String) -> FileDescriptor? {
        let components = relativePath.split(separator: "/").map(String.init)
        guard let last = components.last else { return nil }
        var current = descriptor
        for component in components.dropLast() {
            guard let next = try? current.openChild(FileName(component), flags: AppDirectory.directoryFlags) else { return nil }
            current = next
        }
        return try? current.openChild(FileName(last), flags: FileDescriptor.pathOnly | O_NOFOLLOW)
    }

    /// The directory's descriptor, for a spawned process to enter (`fchdir`)
    /// while this object lives.
    package var rawDescriptor: CInt { descriptor.rawValue }

    /// A walk's root: the same directory on a descriptor of its own.
    func walkRoot() throws(LockError) -> WalkDirectory {
        do {
            let reopened = try descriptor.reopenDirectory()
            return WalkDirectory(descriptor: reopened, relativePath: "", status: try reopened.status())
        } catch {
            throw .system(path: path, error)
        }
    }
}

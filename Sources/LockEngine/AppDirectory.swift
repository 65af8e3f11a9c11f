#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Opens an app directory from its path without ever following a symbolic
/// link: the path runs through the child's home, which the child controls.
enum AppDirectory {
    /// `O_RDONLY | O_DIRECTORY | O_NOFOLLOW`: a directory, never through a link.
    static let directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW
    /// Opens a regular file for `FS_IOC_*FLAGS` without side effects: no
    /// controlling terminal, no wait on a FIFO, never through a link.
    static let fileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

    /// `path` with duplicate and trailing slashes and `.` components removed.
    /// - Throws: ``LockError/invalidPath(_:)`` for a relative path, one with
    ///   `..`, and `/` itself (an app is never the whole filesystem).
    static func normalized(_ path: String) throws(LockError) -> String {
        guard path.hasPrefix("/") else { throw .invalidPath(path) }
        let components = path.split(separator: "/").filter { $0 != "." }
        guard !components.contains(".."), !components.isEmpty else { throw .invalidPath(path) }
        return "/" + components.joined(separator: "/")
    }

    /// Opens `path` one component at a time, each with `O_NOFOLLOW`.
    ///
    /// The result's relative path is "": it is the root of a walk.
    /// - Throws: ``LockError`` naming the first component that is a link, is
    ///   not a directory, or does not exist.
    static func open(_ path: String) throws(LockError) -> WalkDirectory {
        let normalized = try normalized(path)
        var current: FileDescriptor
        do {
            current = try FileDescriptor.open("/", O_RDONLY | O_DIRECTORY)
        } catch {
            throw .system(path: "/", error)
        }
        var walked = ""
        for component in normalized.split(separator: "/") {
            let name = FileName(String(component))
            let parent = current
            walked += "/" + component
            do {
                current = try parent.openChild(name, flags: directoryFlags)
            } catch {
                throw classify(error, name: name, in: parent, path: walked)
            }
        }
        do {
            return WalkDirectory(descriptor: current, relativePath: "", status: try current.status())
        } catch {
            throw .system(path: normalized, error)
        }
    }

    /// The folder holding `path` ("/" for a top-level one).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Joins a relative path and a child's name.
    static func join(_ parent: String, _ name: String) -> String {
        parent.isEmpty ? name : parent + "/" + name
    }

    /// Joins an absolute directory path and a relative path below it.
    static func absolute(_ root: String, _ relative: String) -> String {
        relative.isEmpty ? root : (root == "/" ? "/" + relative : root + "/" + relative)
    }

    private static func classify(_ error: Errno, name: FileName, in parent: FileDescriptor, path: String) -> LockError {
        switch error.rawValue {
        case ENOENT:
            return .directoryNotFound(path)
        case ENOTDIR, ELOOP:
            // O_DIRECTORY | O_NOFOLLOW reports a link as ENOTDIR: ask which it is.
            if let status = try? parent.status(of: name), status.type == .symbolicLink {
                return .symbolicLinkInPath(path)
            }
            return .notADirectory(path)
        default:
            return .system(path: path, error)
        }
    }
}

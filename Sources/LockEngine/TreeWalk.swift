#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A directory a walk holds open, with where it is and what it was when opened.
struct WalkDirectory {
    let descriptor: FileDescriptor
    /// Path relative to the app directory; "" for the app directory itself.
    let relativePath: String
    let status: FileStatus
}

/// What a ``TreeWalk`` does at each entry.
protocol TreeVisitor {
    /// Handles one entry of `parent`. Return the entry opened as a directory
    /// to walk into it next; its entries are read only after this returns, so
    /// a visitor can first make the directory unchangeable.
    mutating func visit(_ entry: DirectoryEntry, path: String, in parent: WalkDirectory) throws -> WalkDirectory?
    /// Called once every entry of `directory` has been visited, the walk's
    /// root included.
    mutating func leave(_ directory: WalkDirectory) throws
}

extension TreeVisitor {
    mutating func leave(_ directory: WalkDirectory) throws {}
}

/// Walks a directory tree by file descriptor only: each directory is opened
/// relative to its parent, so no path is ever resolved twice.
///
/// Iterative, so depth costs heap, not stack; one descriptor is open per level.
enum TreeWalk {
    /// How deep a walk goes before giving up; bounds the descriptors held.
    static let depthLimit = 256

    private struct Frame {
        let directory: WalkDirectory
        let entries: [DirectoryEntry]
        var next = 0
    }

    static func walk(from root: WalkDirectory, visitor: inout some TreeVisitor) throws {
        var stack = [Frame(directory: root, entries: try read(root))]
        while let top = stack.indices.last {
            guard stack[top].next < stack[top].entries.count else {
                let finished = stack.removeLast()
                try visitor.leave(finished.directory)
                continue
            }
            let entry = stack[top].entries[stack[top].next]
            stack[top].next += 1
            let parent = stack[top].directory
            let path = AppDirectory.join(parent.relativePath, entry.name.display)
            guard let child = try visitor.visit(entry, path: path, in: parent) else { continue }
            guard stack.count < depthLimit else { throw LockError.treeTooDeep(path: path, limit: depthLimit) }
            stack.append(Frame(directory: child, entries: try read(child)))
        }
    }

    private static func read(_ directory: WalkDirectory) throws(LockError) -> [DirectoryEntry] {
        do {
            return try directory.descriptor.readDirectory()
        } catch {
            throw .system(path: directory.relativePath, error)
        }
    }
}

/// How a walk reaches one entry of a directory.
enum EntryAccess {
    /// A regular file or directory: open it (`openat`) and work on the descriptor.
    case open(FileStatus.FileType)
    /// A link, FIFO, socket or device: work on it by name, with this status.
    case byName(FileStatus)
}

extension WalkDirectory {
    /// How to reach `entry` (named `path` in errors); nil when it is gone.
    /// Only entries the listing cannot type, or types as links or special
    /// files, cost an `fstatat`.
    func access(to entry: DirectoryEntry, path: String) throws -> EntryAccess? {
        if let type = entry.type, type == .regular || type == .directory { return .open(type) }
        guard let status = try existingStatus(of: entry.name, path: path) else { return nil }
        switch status.type {
        case .regular, .directory: return .open(status.type)
        default: return .byName(status)
        }
    }

    /// Why this directory's filesystem has no inode flags (the immutable
    /// attribute), or nil when it has them.
    func missingFlagSupport() throws(LockError) -> Errno? {
        do {
            _ = try descriptor.flags()
            return nil
        } catch where error.meansFlagsUnsupported {
            return error
        } catch {
            throw .system(path: relativePath, error)
        }
    }

    /// The status of entry `name` (`fstatat` without following links), nil when
    /// it is gone; `path` names it in errors.
    func existingStatus(of name: FileName, path: String) throws -> FileStatus? {
        do {
            return try descriptor.status(of: name)
        } catch where error.rawValue == ENOENT {
            return nil
        } catch {
            throw LockError.system(path: path, error)
        }
    }
}

extension Array where Element == LockedEntry {
    /// Each recorded entry's position, by relative path.
    package func positionsByPath() -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(count)
        for (position, entry) in enumerated() { index[entry.relativePath] = position }
        return index
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Whether a symbolic link inside a locked app leads out of it.
///
/// The lock freezes the link itself, not what it points to: a link to a
/// folder of the child's would leave that content writable while the app
/// looks locked. The link is resolved the way the kernel would, inside the
/// frozen tree, following links met on the way (at most
/// ``maximumLinks``): an absolute target, or `..` above the app directory,
/// leads out. A target that does not exist stays inside, since nothing can be
/// created in a frozen directory.
enum LinkEscape {
    /// Links followed in one resolution, as the kernel's `MAXSYMLINKS`.
    static let maximumLinks = 40

    /// Why the link at `path` (relative to `root`, in display form) leads
    /// out of the app, or nil when it stays inside.
    static func check(_ path: String, in root: WalkDirectory) -> String? {
        var components = path.split(separator: "/").map(String.init)
        guard let name = components.popLast() else { return nil }
        var inside = components
        var pending = [name]
        var followed = 0
        while !pending.isEmpty {
            let component = pending.removeFirst()
            switch component {
            case "", ".":
                continue
            case "..":
                guard inside.popLast() != nil else { return "it leads above the app directory" }
                continue
            default:
                break
            }
            guard let directory = open(inside, in: root), let entry = FileName(display: component),
                  let status = try? directory.status(of: entry)
            else { return nil } // Does not exist: nothing can appear in a frozen tree.
            switch status.type {
            case .symbolicLink:
                followed += 1
                guard followed <= maximumLinks, let bytes = try? directory.linkTarget(of: entry) else { return nil }
                let target = FileName(bytes: bytes).display
                if target.hasPrefix("/") { return "it points to \(target), outside the app" }
                pending = target.split(separator: "/", omittingEmptySubsequences: true).map(String.init) + pending
            case .directory:
                guard status.device == root.status.device else { return "it leads onto another filesystem" }
                inside.append(component)
            default:
                // A file: anything after it cannot resolve.
                return nil
            }
        }
        return nil
    }

    /// Opens the directory at `components` below `root`, never through a link.
    private static func open(_ components: [String], in root: WalkDirectory) -> FileDescriptor? {
        var current: FileDescriptor? = nil
        for component in components {
            guard let name = FileName(display: component),
                  let next = try? (current ?? root.descriptor).openChild(name, flags: AppDirectory.directoryFlags)
            else { return nil }
            current = next
        }
        return current ?? (try? root.descriptor.reopenDirectory())
    }
}

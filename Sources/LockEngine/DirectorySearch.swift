import SystemKit

/// Finds a directory again by device and inode under a search root, after
/// the child renamed something on the way to it.
///
/// The walk is bounded in depth and in directories opened, opens every
/// directory with `O_NOFOLLOW`, and compares inode numbers from the directory
/// listing before it stats anything.
struct DirectorySearch: TreeVisitor {
    /// How many levels below a search root the directory may be.
    static let depthLimit = 4
    /// How many directories one search may open.
    static let directoryBudget = 20_000

    let device: UInt64
    let inode: UInt64
    private var budget = DirectorySearch.directoryBudget
    private(set) var found: String?

    /// The path of the directory with `device` and `inode` under `root`, or
    /// nil when it is not within reach.
    static func find(device: UInt64, inode: UInt64, under root: String) -> String? {
        guard let start = try? AppDirectory.open(root) else { return nil }
        if start.status.device == device, start.status.inode == inode { return root }
        var search = DirectorySearch(device: device, inode: inode)
        do {
            try TreeWalk.walk(from: start, visitor: &search)
        } catch {
            return nil
        }
        return search.found.map { AppDirectory.absolute(root, $0) }
    }

    mutating func visit(_ entry: DirectoryEntry, path: String, in parent: WalkDirectory) throws -> WalkDirectory? {
        guard found == nil, entry.type == .directory || entry.type == nil else { return nil }
        if entry.inode == inode, let status = try? parent.descriptor.status(of: entry.name),
           status.type == .directory, status.device == device, status.inode == inode {
            found = path
            return nil
        }
        let depth = path.utf8.reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 }
        guard depth < Self.depthLimit, budget > 0 else { return nil }
        budget -= 1
        guard let descriptor = try? parent.descriptor.openChild(entry.name, flags: AppDirectory.directoryFlags),
              let status = try? descriptor.status()
        else { return nil }
        return WalkDirectory(descriptor: descriptor, relativePath: path, status: status)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Everything a lock may change or must not change about a folder tree:
/// paths, kinds, owners, modes, sizes, contents, link targets and inode flags.
/// Taken as root, by path, never following links.
public struct TreeSnapshot: Equatable, CustomStringConvertible, Sendable {
    public struct Item: Equatable, CustomStringConvertible, Sendable {
        public var path: String
        public var kind: UInt32
        public var uid: UInt32
        public var gid: UInt32
        public var mode: UInt32
        public var size: Int64
        public var contentHash: UInt64
        public var linkTarget: String
        public var flags: CInt

        public var isDirectory: Bool { kind == 0o040000 }
        public var isRegular: Bool { kind == 0o100000 }
        public var isSymlink: Bool { kind == 0o120000 }
        public var isImmutable: Bool { flags & 0x10 != 0 }

        public var description: String {
            "\(path) kind=\(String(kind, radix: 8)) \(uid):\(gid) mode=\(String(mode, radix: 8)) "
                + "size=\(size) hash=\(contentHash) link=\(linkTarget) flags=\(String(flags, radix: 16))"
        }
    }

    public var items: [Item]

    public var description: String { items.map(\.description).joined(separator: "\n") }

    /// The item at `relative` ("" is the root), if any.
    public subscript(_ relative: String) -> Item? { items.first { $0.path == relative } }

    /// Snapshots `root` and everything below it.
    public static func take(_ root: String) throws -> TreeSnapshot {
        var items: [Item] = []
        try collect(root, relative: "", into: &items)
        return TreeSnapshot(items: items.sorted { $0.path < $1.path })
    }

    /// Items not in the locked state: directories and regular files without
    /// the immutable attribute (links and special files have none of their
    /// own; their immutable directory keeps them).
    public func unlockedItems(exempt: Set<String> = []) -> [Item] {
        items.filter { item in
            guard !exempt.contains(item.path) else { return false }
            return (item.isDirectory || item.isRegular) && !item.isImmutable
        }
    }

    /// Items whose owner, group, mode, contents or link target differ from
    /// `other`'s (a lock must change none of them), and items only one has.
    public func changes(from other: TreeSnapshot) -> [String] {
        var changed: [String] = []
        for item in items {
            guard let before = other[item.path] else {
                changed.append("\(item.path): new")
                continue
            }
            if item.uid != before.uid || item.gid != before.gid || item.mode != before.mode
                || item.contentHash != before.contentHash || item.linkTarget != before.linkTarget || item.kind != before.kind {
                changed.append("\(item.path): \(before) -> \(item)")
            }
        }
        for item in other.items where self[item.path] == nil { changed.append("\(item.path): gone") }
        return changed
    }

    private static func collect(_ path: String, relative: String, into items: inout [Item]) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw FixtureError("lstat \(path): errno \(errno)") }
        let kind = UInt32(info.st_mode) & 0o170000
        var item = Item(path: relative, kind: kind, uid: info.st_uid, gid: info.st_gid,
                        mode: UInt32(info.st_mode) & 0o7777, size: Int64(info.st_size),
                        contentHash: 0, linkTarget: "", flags: 0)
        if kind == 0o120000 {
            item.linkTarget = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        } else {
            item.flags = inodeFlags(path) ?? 0
        }
        if kind == 0o100000 { item.contentHash = try hash(path) }
        items.append(item)
        guard kind == 0o040000 else { return }
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            try collect(path + "/" + name, relative: relative.isEmpty ? name : relative + "/" + name, into: &items)
        }
    }

    /// FNV-1a over the file's bytes.
    private static func hash(_ path: String) throws -> UInt64 {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw FixtureError("open \(path): errno \(errno)") }
        defer { close(fd) }
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            for byte in buffer[0..<count] { value = (value ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return value
    }
}

/// The inode flags of `path` (`FS_IOC_GETFLAGS`), nil when they cannot be read.
public func inodeFlags(_ path: String) -> CInt? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var flags: CInt = 0
    // FS_IOC_GETFLAGS: _IOR('f', 1, long), 0x80086601 on 64-bit Linux.
    guard ioctl(fd, 0x8008_6601, &flags) == 0 else { return nil }
    return flags
}

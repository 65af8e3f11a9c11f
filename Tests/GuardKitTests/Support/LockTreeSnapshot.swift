#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// Everything a lock may change or must not change about a tree: paths,
/// kinds, owners, modes, sizes, contents, link targets and inode flags.
/// Taken by path, as root, never following links.
struct LockTreeSnapshot: Equatable, CustomStringConvertible {
    struct Item: Equatable, CustomStringConvertible {
        var path: String
        var kind: UInt32
        var uid: UInt32
        var gid: UInt32
        var mode: UInt32
        var size: Int64
        var contentHash: UInt64
        var linkTarget: String
        var flags: CInt

        var isDirectory: Bool { kind == 0o040000 }
        var isRegular: Bool { kind == 0o100000 }
        var isSymlink: Bool { kind == 0o120000 }
        var isImmutable: Bool { flags & 0x10 != 0 }

        var description: String {
            "\(path) kind=\(String(kind, radix: 8)) \(uid):\(gid) mode=\(String(mode, radix: 8)) "
                + "size=\(size) hash=\(contentHash) link=\(linkTarget) flags=\(String(flags, radix: 16))"
        }
    }

    var items: [Item]

    var description: String { items.map(\.description).joined(separator: "\n") }

    /// The item at `relative`, if any.
    subscript(_ relative: String) -> Item? { items.first { $0.path == relative } }

    /// Snapshots `root` and everything below it.
    static func take(_ root: String) throws -> LockTreeSnapshot {
        var items: [Item] = []
        try collect(root, relative: "", into: &items)
        return LockTreeSnapshot(items: items.sorted { $0.path < $1.path })
    }

    private static func collect(_ path: String, relative: String, into items: inout [Item]) throws {
        let info = try LockFiles.status(path)
        let kind = UInt32(info.st_mode) & 0o170000
        var item = Item(path: relative, kind: kind, uid: info.st_uid, gid: info.st_gid,
                        mode: UInt32(info.st_mode) & 0o7777, size: Int64(info.st_size),
                        contentHash: 0, linkTarget: "", flags: 0)
        if kind == 0o120000 {
            item.linkTarget = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
        } else {
            item.flags = LockFiles.flags(path) ?? 0
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
        guard fd >= 0 else { throw LockTestError("open \(path): errno \(errno)") }
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

    /// Items that are not in the locked state: owned by root, no write bit,
    /// no setuid bit on what the child owned, and immutable (files and
    /// directories) when `expectImmutable`. Items in `exempt` are skipped.
    func unlockedItems(expectImmutable: Bool = true, exempt: Set<String> = []) -> [Item] {
        items.filter { item in
            guard !exempt.contains(item.path) else { return false }
            if item.uid != 0 { return true }
            if item.isSymlink { return false }
            if item.mode & 0o222 != 0 || item.mode & 0o4000 != 0 { return true }
            return expectImmutable && (item.isDirectory || item.isRegular) && !item.isImmutable
        }
    }
}

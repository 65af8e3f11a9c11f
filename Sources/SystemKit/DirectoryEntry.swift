#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

/// One entry of a directory as `getdents64(2)` returns it.
public struct DirectoryEntry: Hashable, Sendable {
    /// The entry's name in its directory.
    public var name: FileName
    /// `d_ino`: the inode the name pointed to when the directory was read.
    public var inode: UInt64
    /// `d_type`, or nil when the filesystem does not say (`DT_UNKNOWN`).
    public var type: FileStatus.FileType?

    public init(name: FileName, inode: UInt64, type: FileStatus.FileType?) {
        self.name = name
        self.inode = inode
        self.type = type
    }
}

extension FileDescriptor {
    /// Every entry of the open directory except `.` and `..`, read from the start.
    ///
    /// A directory removed after it was opened, even midway through the
    /// listing, has no entries (only an empty directory can be removed); the
    /// kernel answers `ENOENT` for it, which reads here as an empty list.
    ///
    /// Maps to `lseek(2)` and `getdents64(2)`.
    /// - Throws: ``Errno``; `ENOTDIR` when the descriptor is not a directory,
    ///   `EIO` when a record is not what `getdents64` writes.
    public func readDirectory() throws(Errno) -> [DirectoryEntry] {
        _ = try retryingOnInterrupt("lseek") { lseek(rawValue, 0, SEEK_SET) }
        let capacity = 32 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        var entries: [DirectoryEntry] = []
        while true {
            let count: Int
            do {
                count = try retryingOnInterrupt("getdents64") { csystem_getdents64(rawValue, buffer, capacity) }
            } catch where error.rawValue == ENOENT {
                return []  // Removed meanwhile: whatever was read before is gone too.
            }
            if count == 0 { return entries }
            var offset = 0
            var record = csystem_directory_entry()
            while true {
                let decoded = csystem_next_directory_entry(buffer, count, &offset, &record)
                if decoded == 0 { break }
                guard decoded > 0, let start = record.name else { throw Errno(EIO, operation: "getdents64 record") }
                let bytes = UnsafeRawBufferPointer(start: start, count: record.name_length)
                if bytes.first == UInt8(ascii: "."), bytes.count == 1 || (bytes.count == 2 && bytes[1] == UInt8(ascii: ".")) {
                    continue
                }
                let name = bytes.withMemoryRebound(to: UInt8.self) { FileName(bytes: $0) }
                entries.append(DirectoryEntry(name: name, inode: record.inode, type: Self.fileType(record.type)))
            }
        }
    }

    private static func fileType(_ raw: UInt8) -> FileStatus.FileType? {
        switch Int(raw) {
        case DT_UNKNOWN: nil
        case DT_DIR: .directory
        case DT_REG: .regular
        case DT_LNK: .symbolicLink
        default: .other
        }
    }
}

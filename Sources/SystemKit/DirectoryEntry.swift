#if canImport(Glibc)
import Glibc
#endif

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
    public func readDirectory() throws(Errno) -> [DirectoryEntry] {
        guard let getdents64 = GlibcExtras.getdents64 else { throw Errno(ENOSYS, operation: "getdents64") }
        _ = try retryingOnInterrupt("lseek") { lseek(rawValue, 0, SEEK_SET) }
        let capacity = 32 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        var entries: [DirectoryEntry] = []
        while true {
            let count: Int
            do {
                count = try retryingOnInterrupt("getdents64") { getdents64(rawValue, buffer, capacity) }
            } catch where error.rawValue == ENOENT {
                return []  // Removed meanwhile: whatever was read before is gone too.
            }
            if count == 0 { return entries }
            var offset = 0
            // struct linux_dirent64: u64 d_ino, s64 d_off, u16 d_reclen, u8 d_type, char d_name[].
            while offset < count {
                let record = buffer + offset
                let inode = record.loadUnaligned(as: UInt64.self)
                let length = Int(record.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
                let rawType = record.load(fromByteOffset: 18, as: UInt8.self)
                let namePointer = (record + 19).assumingMemoryBound(to: UInt8.self)
                let nameLength = strlen(UnsafeRawPointer(namePointer).assumingMemoryBound(to: CChar.self))
                offset += length
                let name = UnsafeBufferPointer(start: namePointer, count: nameLength)
                if name.first == 0x2e, nameLength == 1 || (nameLength == 2 && name[1] == 0x2e) { continue }
                entries.append(DirectoryEntry(name: FileName(bytes: name), inode: inode, type: Self.fileType(rawType)))
            }
        }
    }

    private static func fileType(_ raw: UInt8) -> FileStatus.FileType? {
        switch raw {
        case 0: nil // DT_UNKNOWN
        case 4: .directory // DT_DIR
        case 8: .regular // DT_REG
        case 10: .symbolicLink // DT_LNK
        default: .other
        }
    }
}

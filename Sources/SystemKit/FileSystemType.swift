#if canImport(Glibc)
import Glibc
#endif

/// The type of a mounted filesystem, from `statfs(2)`'s `f_type` magic number.
public struct FileSystemType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let ext4 = FileSystemType(rawValue: 0xEF53)
    public static let btrfs = FileSystemType(rawValue: 0x9123_683E)
    public static let xfs = FileSystemType(rawValue: 0x5846_5342)
    public static let tmpfs = FileSystemType(rawValue: 0x0102_1994)
    public static let ramfs = FileSystemType(rawValue: 0x8584_58F6)
    public static let nfs = FileSystemType(rawValue: 0x6969)
    public static let fuse = FileSystemType(rawValue: 0x6573_5546)
    public static let overlay = FileSystemType(rawValue: 0x794C_7630)

    private static let names: [UInt64: String] = [
        0xEF53: "ext2/3/4", 0x9123_683E: "btrfs", 0x5846_5342: "xfs", 0x2FC1_2FC1: "zfs",
        0x0102_1994: "tmpfs", 0x8584_58F6: "ramfs", 0x6969: "nfs", 0x6573_5546: "fuse",
        0x794C_7630: "overlayfs", 0x0102_1997: "9p", 0xFF53_4D42: "cifs", 0xFE53_4D42: "smb2",
        0x4D44: "vfat", 0x2011_BAB0: "exfat", 0x5346_544E: "ntfs", 0x7366_746E: "ntfs3",
        0x7371_7368: "squashfs", 0xE0F5_E1E2: "erofs", 0x6A65_6A63: "virtiofs", 0xF2F5_2010: "f2fs",
        0x3153_464A: "jfs", 0x5265_4973: "reiserfs", 0x0000_9FA0: "proc", 0x6265_6572: "sysfs",
    ]

    /// A short name (`tmpfs`, `nfs`), or the magic number in hex.
    public var description: String {
        Self.names[rawValue] ?? "0x" + String(rawValue, radix: 16)
    }
}

extension FileDescriptor {
    /// The type of the filesystem holding the open file (`fstatfs(2)`).
    public func fileSystemType() throws(Errno) -> FileSystemType {
        guard let fstatfs = GlibcExtras.fstatfs else { throw Errno(ENOSYS, operation: "fstatfs") }
        // struct statfs is 120 bytes on 64-bit Linux and starts with the
        // __fsword_t f_type; the buffer leaves room to spare.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
        defer { buffer.deallocate() }
        _ = try retryingOnInterrupt("fstatfs") { fstatfs(rawValue, buffer) }
        return FileSystemType(rawValue: UInt64(UInt(bitPattern: buffer.load(as: Int.self))))
    }
}

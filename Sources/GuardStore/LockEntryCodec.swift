import LockEngine

/// The lock journal's entries as compact blobs: one row holds thousands of
/// entries, so a lock journals an app of ten thousand files in a few row
/// writes instead of ten thousand B-tree inserts.
///
/// Layout, little-endian: the magic `FCJ1`, the entry count (u32), then per
/// entry: kind (u8), was-immutable (u8), device (u64), inode (u64), uid
/// (u32), gid (u32), mode (u16), path length (u32) and the path's UTF-8
/// bytes. Decoding checks every length and value, so a damaged or
/// hand-edited blob is an error, never a wrong entry.
package enum LockEntryCodec {
    static let magic: [UInt8] = Array("FCJ1".utf8)
    /// Entries per blob: a big app's journal spreads over rows of bounded size.
    package static let entriesPerChunk = 16_384
    /// The longest relative path a blob may hold (the kernel's `PATH_MAX`, with room for escapes).
    static let maximumPathLength = 4 * 4096

    static func encode(_ entries: some Collection<LockedEntry>) -> [UInt8] {
        var bytes: [UInt8] = magic
        bytes.reserveCapacity(8 + entries.count * 64)
        append(UInt32(entries.count), to: &bytes)
        for entry in entries {
            bytes.append(UInt8(entry.kind.rawValue))
            bytes.append(entry.wasImmutable ? 1 : 0)
            append(entry.device, to: &bytes)
            append(entry.inode, to: &bytes)
            append(entry.uid, to: &bytes)
            append(entry.gid, to: &bytes)
            append(UInt16(truncatingIfNeeded: entry.mode), to: &bytes)
            let path = Array(entry.relativePath.utf8)
            append(UInt32(path.count), to: &bytes)
            bytes += path
        }
        return bytes
    }

    /// The entries of one blob.
    /// - Throws: ``CodecError`` naming what is wrong with it.
    static func decode(_ data: [UInt8]) throws(CodecError) -> [LockedEntry] {
        var reader = Reader(bytes: data)
        guard try reader.bytes(4) == magic[...] else { throw .badMagic }
        let count = Int(try reader.integer(UInt32.self))
        guard count <= reader.remaining / 32 else { throw .truncated }
        var entries: [LockedEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            guard let kind = LockedEntry.Kind(rawValue: Int(try reader.integer(UInt8.self))) else { throw .badValue("kind") }
            let immutable = try reader.integer(UInt8.self)
            guard immutable <= 1 else { throw .badValue("was_immutable") }
            let device = try reader.integer(UInt64.self)
            let inode = try reader.integer(UInt64.self)
            let uid = try reader.integer(UInt32.self)
            let gid = try reader.integer(UInt32.self)
            let mode = try reader.integer(UInt16.self)
            guard mode <= 0o7777 else { throw .badValue("mode") }
            let length = Int(try reader.integer(UInt32.self))
            guard length <= maximumPathLength else { throw .badValue("path length") }
            guard let path = String(validating: try reader.bytes(length), as: UTF8.self) else { throw .badValue("path") }
            entries.append(LockedEntry(relativePath: path, kind: kind, device: device, inode: inode,
                                       uid: uid, gid: gid, mode: UInt32(mode), wasImmutable: immutable == 1))
        }
        guard reader.remaining == 0 else { throw .trailingBytes }
        return entries
    }

    enum CodecError: Error, Hashable, CustomStringConvertible {
        case badMagic, truncated, trailingBytes
        case badValue(String)

        var description: String {
            switch self {
            case .badMagic: "not a journal blob"
            case .truncated: "truncated"
            case .trailingBytes: "bytes after the last entry"
            case .badValue(let field): "an invalid \(field)"
            }
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        var remaining: Int { bytes.count - offset }

        mutating func bytes(_ count: Int) throws(CodecError) -> ArraySlice<UInt8> {
            guard count >= 0, count <= remaining else { throw .truncated }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws(CodecError) -> T {
            let slice = try bytes(MemoryLayout<T>.size)
            var value: T = 0
            for (shift, byte) in slice.enumerated() { value |= T(byte) << (shift * 8) }
            return value
        }
    }
}

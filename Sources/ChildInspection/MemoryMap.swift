/// One executable mapping of a process, as `/proc/PID/maps` lists it: bytes
/// the process's owner controls (its path is any name the child chose), so
/// read only into these fields and decided on elsewhere.
public struct MemoryMapping: Sendable, Equatable {
    /// The address range, `START-END` in hexadecimal, the name of its entry in `map_files`.
    public var range: String
    /// The device as the map lists it (`MAJOR:MINOR` in hexadecimal), nil when malformed.
    public var device: (major: UInt64, minor: UInt64)?
    /// The inode; 0 for an anonymous mapping, nil when malformed.
    public var inode: UInt64?
    /// The path, without the padding before it; empty for none.
    public var path: String

    public init(range: String, device: (major: UInt64, minor: UInt64)?, inode: UInt64?, path: String) {
        self.range = range
        self.device = device
        self.inode = inode
        self.path = path
    }

    public static func == (lhs: MemoryMapping, rhs: MemoryMapping) -> Bool {
        lhs.range == rhs.range && lhs.device?.major == rhs.device?.major && lhs.device?.minor == rhs.device?.minor
            && lhs.inode == rhs.inode && lhs.path == rhs.path
    }
}

/// The executable mappings in the text of `/proc/PID/maps`.
public enum MemoryMap {
    /// The largest maps text read; a process with more mappings is refused.
    public static let limit = 4 << 20

    /// Why a maps text is refused.
    public enum Problem: Error, Equatable {
        /// Longer than ``limit``.
        case tooLong
    }

    /// The mappings of `text` that may run code (an `x` in their permissions);
    /// lines with fewer than five fields are skipped, as the kernel never writes them.
    public static func executableMappings(_ text: [UInt8]) throws(Problem) -> [MemoryMapping] {
        guard text.count <= limit else { throw .tooLong }
        var mappings: [MemoryMapping] = []
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].contains(UInt8(ascii: "x")) else { continue }
            let path = fields.count > 5 ? String(decoding: fields[5].drop { $0 == UInt8(ascii: " ") }, as: UTF8.self) : ""
            mappings.append(MemoryMapping(
                range: String(decoding: fields[0], as: UTF8.self),
                device: device(fields[3]),
                inode: UInt64(String(decoding: fields[4], as: UTF8.self)),
                path: path
            ))
        }
        return mappings
    }

    private static func device(_ field: ArraySlice<UInt8>) -> (major: UInt64, minor: UInt64)? {
        let parts = field.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, let major = UInt64(String(decoding: parts[0], as: UTF8.self), radix: 16),
              let minor = UInt64(String(decoding: parts[1], as: UTF8.self), radix: 16) else { return nil }
        return (major, minor)
    }
}

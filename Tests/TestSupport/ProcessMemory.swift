import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads another process's memory through `/proc/PID/mem` (root, or the
/// same user with ptrace rights): where a secret might linger after use.
public enum ProcessMemory {
    /// The start addresses and names of the regions of `pid` that hold data
    /// the process wrote: writable mappings (heap, stacks, anonymous memory,
    /// the data of its libraries).
    public static func writableRegions(of pid: Int32) throws -> [(range: Range<UInt64>, name: String)] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        return maps.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw") else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16),
                  end > start else { return nil }
            let name = fields.count > 5 ? fields[5...].joined(separator: " ") : "[anonymous]"
            // The vsyscall page cannot be read this way, and holds nothing of the process's.
            guard name != "[vvar]", name != "[vsyscall]", name != "[vvar_vclock]" else { return nil }
            return (start..<end, name)
        }
    }

    /// The regions of `pid`'s writable memory that contain `needle`; empty
    /// when no copy of it is left.
    public static func regions(of pid: Int32, containing needle: [UInt8]) throws -> [String] {
        precondition(!needle.isEmpty)
        let memory = open("/proc/\(pid)/mem", O_RDONLY | O_CLOEXEC)
        guard memory >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(memory) }
        var found: [String] = []
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk + needle.count, alignment: 16)
        defer { buffer.deallocate() }
        for region in try writableRegions(of: pid) {
            var offset = region.range.lowerBound
            var carried = 0
            regionLoop: while offset < region.range.upperBound {
                let wanted = Int(min(UInt64(chunk), region.range.upperBound - offset))
                let count = pread(memory, buffer.baseAddress! + carried, wanted, off_t(Int64(bitPattern: offset)))
                guard count > 0 else { break }
                let total = carried + count
                let hit = contains(UnsafeRawBufferPointer(rebasing: buffer[0..<total]), needle)
                if hit {
                    found.append("\(region.name) at 0x\(String(region.range.lowerBound, radix: 16))")
                    break regionLoop
                }
                // Keep the tail, so a copy straddling two reads is still found.
                carried = min(needle.count - 1, total)
                memmove(buffer.baseAddress!, buffer.baseAddress! + total - carried, carried)
                offset += UInt64(count)
            }
        }
        return found
    }

    /// Whether `haystack` holds `needle`: memchr for the first byte, then a compare.
    private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let base = haystack.baseAddress, haystack.count >= needle.count else { return false }
        let first = Int32(needle[0])
        var position = 0
        return needle.withUnsafeBytes { needleBytes in
            while position <= haystack.count - needle.count {
                guard let hit = memchr(base + position, first, haystack.count - needle.count + 1 - position) else { return false }
                let index = UnsafeRawPointer(hit) - base
                if memcmp(base + index, needleBytes.baseAddress!, needle.count) == 0 { return true }
                position = index + 1
            }
            return false
        }
    }
}

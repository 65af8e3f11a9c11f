#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Which processes have a file open for writing, for the message an
/// administrator reads; the fact itself comes from
/// ``SystemKit/FileDescriptor/writers()``.
///
/// Looks at every process's descriptors (`/proc/PID/fd`, with the access mode
/// from `/proc/PID/fdinfo`) and shared writable mappings (`/proc/PID/maps`).
/// A descriptor in flight in a Unix socket belongs to no process and cannot
/// be named.
enum OpenWriters {
    /// At most this many processes are named.
    static let namedLimit = 3

    /// "process 123 (cat, uid 1001)", or a general phrase when none can be named.
    static func describe(device: UInt64, inode: UInt64) -> String {
        let holders = find(device: device, inode: inode)
        guard !holders.isEmpty else { return "a process (a descriptor in flight, or one that could not be named)" }
        let named = holders.prefix(namedLimit).map { pid in
            let command = readSmall("/proc/\(pid)/comm")?.trimmingWhitespace() ?? "?"
            let uid = readSmall("/proc/\(pid)/status").flatMap(uidField).map { ", uid \($0)" } ?? ""
            return "process \(pid) (\(FileName(command).display)\(uid))"
        }
        let more = holders.count > namedLimit ? " and \(holders.count - namedLimit) more" : ""
        return named.joined(separator: ", ") + more
    }

    /// Pids holding `device`/`inode` open for writing or mapped shared and writable.
    static func find(device: UInt64, inode: UInt64) -> [Int32] {
        guard let proc = try? FileDescriptor.open("/proc", O_RDONLY | O_DIRECTORY),
              let listing = try? proc.readDirectory() else { return [] }
        var found: [Int32] = []
        for entry in listing {
            guard let pid = Int32(entry.name.display), pid > 0 else { continue }
            if writes(pid: pid, device: device, inode: inode) { found.append(pid) }
        }
        return found
    }

    private static func writes(pid: Int32, device: UInt64, inode: UInt64) -> Bool {
        if let descriptors = try? FileDescriptor.open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY),
           let names = try? descriptors.readDirectory() {
            for name in names {
                var info = stat()
                guard fstatat(descriptors.rawValue, name.name.cString, &info, 0) == 0,
                      UInt64(info.st_ino) == inode, UInt64(info.st_dev) == device,
                      let text = readSmall("/proc/\(pid)/fdinfo/\(name.name.display)"),
                      let flags = fieldValue("flags:", in: text).flatMap({ Int($0, radix: 8) })
                else { continue }
                if flags & Int(O_ACCMODE) != Int(O_RDONLY) { return true }
            }
        }
        // Shared writable mappings: "addr perms offset dev inode path", perms like "rw-s".
        guard let maps = readSmall("/proc/\(pid)/maps", limit: 4 << 20) else { return false }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw"), fields[1].hasSuffix("s"),
                  UInt64(fields[4]) == inode else { continue }
            return true
        }
        return false
    }

    private static func uidField(_ status: String) -> String? {
        fieldValue("Uid:", in: status)?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.map(String.init)
    }

    private static func fieldValue(_ name: String, in text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            return line.dropFirst(name.count).trimmingWhitespace()
        }
        return nil
    }

    private static func readSmall(_ path: String, limit: Int = 64 << 10) -> String? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while data.count < limit {
            let count = chunk.withUnsafeMutableBytes { try? fd.read(into: $0) } ?? 0
            if count <= 0 { break }
            data += chunk[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

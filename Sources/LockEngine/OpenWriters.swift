#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Which processes have some files open for writing, for the message an
/// administrator reads; the fact itself comes from
/// ``SystemKit/FileDescriptor/writers()``.
///
/// One pass over `/proc` answers for every file asked about: each process's
/// descriptors (`/proc/PID/fd`, with the access mode from `/proc/PID/fdinfo`)
/// and shared writable mappings (`/proc/PID/maps`) are read once, whatever
/// the number of files, so a lock of many files with writers costs one scan,
/// not one per file. A descriptor in flight in a Unix socket belongs to no
/// process and cannot be named.
struct OpenWriters {
    /// A file by its identity.
    struct File: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// At most this many processes are named per file.
    static let namedLimit = 3
    /// What a writer no process holds is called.
    static let unnamed = "a process (a descriptor in flight, or one that could not be named)"

    /// Pids holding each file open for writing or mapped shared and writable.
    private(set) var holders: [File: [Int32]] = [:]
    /// "process 123 (cat, uid 1001)" for each pid in `holders`.
    private var names: [Int32: String] = [:]

    /// Scans every process once for the writers of `files`.
    init(of files: Set<File>) {
        guard !files.isEmpty,
              let proc = try? FileDescriptor.open("/proc", O_RDONLY | O_DIRECTORY),
              let listing = try? proc.readDirectory() else { return }
        // A mapping names its file by inode; its device number is the
        // superblock's, which is not st_dev on every filesystem (btrfs).
        var byInode: [UInt64: [File]] = [:]
        for file in files { byInode[file.inode, default: []].append(file) }
        for entry in listing {
            guard let pid = Int32(entry.name.display), pid > 0 else { continue }
            let written = Self.written(by: pid, among: files, byInode: byInode)
            guard !written.isEmpty else { continue }
            for file in written { holders[file, default: []].append(pid) }
            names[pid] = Self.name(of: pid)
        }
    }

    /// "process 123 (cat, uid 1001)", or a general phrase when none can be named.
    func describe(_ file: File) -> String {
        let pids = holders[file] ?? []
        guard !pids.isEmpty else { return Self.unnamed }
        let named = pids.prefix(Self.namedLimit).map { names[$0] ?? "process \($0)" }
        let more = pids.count > Self.namedLimit ? " and \(pids.count - Self.namedLimit) more" : ""
        return named.joined(separator: ", ") + more
    }

    /// The files of `files` that `pid` has open for writing or mapped shared and writable.
    private static func written(by pid: Int32, among files: Set<File>, byInode: [UInt64: [File]]) -> Set<File> {
        var found = Set<File>()
        if let descriptors = try? FileDescriptor.open("/proc/\(pid)/fd", O_RDONLY | O_DIRECTORY),
           let names = try? descriptors.readDirectory() {
            for name in names {
                var info = stat()
                guard fstatat(descriptors.rawValue, name.name.cString, &info, 0) == 0 else { continue }
                let file = File(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
                guard files.contains(file), !found.contains(file),
                      let text = readSmall("/proc/\(pid)/fdinfo/\(name.name.display)"),
                      let flags = fieldValue("flags:", in: text).flatMap({ Int($0, radix: 8) })
                else { continue }
                if flags & Int(O_ACCMODE) != Int(O_RDONLY) { found.insert(file) }
            }
        }
        // Shared writable mappings: "addr perms offset dev inode path", perms like "rw-s".
        guard let maps = readSmall("/proc/\(pid)/maps", limit: 4 << 20) else { return found }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw"), fields[1].hasSuffix("s"),
                  let inode = UInt64(fields[4]), let mapped = byInode[inode] else { continue }
            found.formUnion(mapped)
        }
        return found
    }

    private static func name(of pid: Int32) -> String {
        let command = readBytes("/proc/\(pid)/comm").map(commandName)?.display ?? "?"
        let uid = readSmall("/proc/\(pid)/status").flatMap(uidField).map { ", uid \($0)" } ?? ""
        return "process \(pid) (\(command)\(uid))"
    }

    /// The command in `/proc/PID/comm`, without the newline the kernel ends it
    /// with; anything else in it is the process's own choice, shown escaped.
    private static func commandName(_ comm: [UInt8]) -> FileName {
        FileName(bytes: comm.last == UInt8(ascii: "\n") ? Array(comm.dropLast()) : comm)
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
        readBytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func readBytes(_ path: String, limit: Int = 64 << 10) -> [UInt8]? {
        try? FileDescriptor.readFile(path, limit: limit)
    }
}

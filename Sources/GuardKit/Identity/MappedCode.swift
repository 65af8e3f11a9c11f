#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import LockEngine

/// Checks the code a process actually runs: every executable mapping in
/// `/proc/PID/maps` must be the app's own executable, a file inside the app
/// directory, or a file only root can change.
///
/// This is what `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT` and a library
/// loaded by other means leave behind, whatever the process's environment
/// says afterwards (a preloaded library can rewrite its own environment).
/// Each mapped file is examined through `/proc/PID/map_files`, which opens
/// the very inode mapped, even a deleted one.
struct MappedCode {
    /// The largest maps file read; a process with more mappings is refused.
    static let mapsLimit = 4 << 20

    let proc: FileDescriptor
    let pid: Int32

    /// Why the process runs code that is not the app's, or nil when it does not.
    func problem(executable: FileIdentity, app: OpenedDirectory) -> String? {
        guard let maps = AppIdentifier.readFile(at: proc, "maps", limit: Self.mapsLimit + 1) else {
            return "its memory map could not be read"
        }
        guard maps.count <= Self.mapsLimit else { return "it has more memory mappings than the Guard examines" }
        let mapFiles = try? proc.openChild(FileName("map_files"), flags: O_RDONLY | O_DIRECTORY)
        for line in maps.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].contains(UInt8(ascii: "x")) else { continue }
            let range = String(decoding: fields[0], as: UTF8.self)
            let inode = UInt64(String(decoding: fields[4], as: UTF8.self)) ?? 0
            // The path is padded to a column: drop the spaces before it.
            let path = fields.count > 5 ? String(decoding: fields[5].drop { $0 == UInt8(ascii: " ") }, as: UTF8.self) : ""
            if inode == 0 {
                if path == "[vdso]" || path == "[vsyscall]" { continue }
                return "it runs code that does not come from a file"
            }
            guard let mapped = mappedStatus(range: range, path: path, inode: inode, in: mapFiles) else {
                return "the file it maps at \(range) could not be examined"
            }
            if FileIdentity(mapped) == executable { continue }
            if mapped.uid == 0, mapped.permissions & 0o022 == 0 { continue }
            if isInside(app, path: path, mapped) { continue }
            return "it runs code from \(FileName(path).display), which is neither the app's nor only root's to change"
        }
        return nil
    }

    /// The status of the mapped inode: through `map_files` when the Guard may
    /// open it, otherwise the file at the mapping's path if it is that inode.
    private func mappedStatus(range: String, path: String, inode: UInt64, in mapFiles: FileDescriptor?) -> FileStatus? {
        if let mapFiles {
            var raw = stat()
            if fstatat(mapFiles.rawValue, range, &raw, 0) == 0 { return FileStatus(raw) }
        }
        var raw = stat()
        guard path.hasPrefix("/"), stat(path, &raw) == 0, UInt64(raw.st_ino) == inode else { return nil }
        return FileStatus(raw)
    }

    /// Whether the mapped file is the file at its path inside the app directory.
    private func isInside(_ app: OpenedDirectory, path: String, _ mapped: FileStatus) -> Bool {
        let prefix = app.path + "/"
        guard path.hasPrefix(prefix), let found = app.status(of: String(path.dropFirst(prefix.count))) else { return false }
        return found.isSameFile(as: mapped)
    }
}

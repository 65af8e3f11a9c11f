#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import LockEngine
import GuardProtocol

/// Checks the code a process actually runs: every executable mapping in
/// `/proc/PID/maps` must be the app's own executable, a file inside the app
/// directory (for a Flatpak app: the file at its path in the deployment's
/// `files`, under `/app`, or in the runtime's, under `/usr`), or a file only
/// root can change.
///
/// This is what `LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT` and a library
/// loaded by other means leave behind, whatever the process's environment
/// says afterwards (a preloaded library can rewrite its own environment).
/// Each mapped file is examined through `/proc/PID/map_files`, which opens
/// the very inode mapped, even a deleted one.
struct MappedCode {
    let proc: FileDescriptor
    let pid: Int32
    let inspector: Inspector

    /// A folder whose files are the app's code, and the prefix its files
    /// have in the process's memory map (`ROOT/APPID/`, or `/app/` in a sandbox).
    struct Place {
        var prefix: String
        var directory: OpenedDirectory
    }

    /// Why the process runs code that is not the app's, or nil when it does not.
    func examined(executable: FileIdentity, app: OpenedDirectory) throws(IdentityError) -> String? {
        try examined(executable: executable, places: [Place(prefix: app.path + "/", directory: app)], sandboxed: false)
    }

    /// ``problem(executable:places:sandboxed:)``, an inspector that failed
    /// an ``IdentityError/inspectorFailed(what:problem:)``.
    func examined(executable: FileIdentity, places: [Place], sandboxed: Bool) throws(IdentityError) -> String? {
        do throws(InspectionFailure) {
            return try problem(executable: executable, places: places, sandboxed: sandboxed)
        } catch {
            throw .inspectorFailed(what: "the memory map of process \(pid)", problem: "\(error)")
        }
    }

    /// Why the process runs code that is not the app's, or nil when it does
    /// not: each mapping must be `executable`, a file in one of `places`, or
    /// root's. In a sandbox (`sandboxed`) the paths are the sandbox's, so a
    /// mapped file is never looked up at its path on the host: what
    /// `map_files` cannot open is taken as the device and inode the kernel
    /// lists in the map.
    func problem(executable: FileIdentity, places: [Place], sandboxed: Bool) throws(InspectionFailure) -> String? {
        guard let maps = try? proc.openChild(FileName("maps"), flags: O_RDONLY) else { return "its memory map could not be read" }
        let mappings: [Inspect.MemoryMapping]
        do throws(InspectionFailure) {
            mappings = try inspector.executableMappings(maps)
        } catch {
            switch error {
            case .refused: return "it has more memory mappings than the Guard examines"
            case .failed: throw error
            }
        }
        let mapFiles = try? proc.openChild(FileName("map_files"), flags: O_RDONLY | O_DIRECTORY)
        for mapping in mappings {
            let (range, path) = (mapping.range, mapping.path)
            // A malformed inode is taken as none: code that does not come from a file.
            let inode = mapping.inode.flatMap { UInt64(exactly: $0) } ?? 0
            if inode == 0 {
                if path == "[vdso]" || path == "[vsyscall]" { continue }
                return "it runs code that does not come from a file"
            }
            let found = mappedStatus(range: range, path: sandboxed ? "" : path, inode: inode, in: mapFiles)
            if found == nil, sandboxed, let major = mapping.major.flatMap({ UInt64(exactly: $0) }),
               let minor = mapping.minor.flatMap({ UInt64(exactly: $0) }),
               let listed = Self.listedIdentity(major: major, minor: minor, inode: inode) {
                if listed == executable || places.contains(where: { isInside($0, path: path, listed) }) { continue }
                return "it runs code from \(FileName(path).display), which is not the app's"
            }
            guard let mapped = found else {
                return "the file it maps at \(range) could not be examined"
            }
            if FileIdentity(mapped) == executable { continue }
            if mapped.uid == 0, mapped.permissions & 0o022 == 0 { continue }
            if places.contains(where: { isInside($0, path: path, FileIdentity(mapped)) }) { continue }
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

    /// Whether the mapped file is the file at its path inside `place`.
    private func isInside(_ place: Place, path: String, _ mapped: FileIdentity) -> Bool {
        guard path.hasPrefix(place.prefix), !path.hasSuffix(" (deleted)"),
              let found = place.directory.status(of: String(path.dropFirst(place.prefix.count))) else { return false }
        return FileIdentity(found) == mapped
    }

    /// The identity `stat(2)` would give a mapping of device `major`:`minor` and `inode`.
    static func listedIdentity(major: UInt64, minor: UInt64, inode: UInt64) -> FileIdentity? {
        // glibc's makedev(3).
        let device = ((major & 0xffff_f000) << 32) | ((major & 0xfff) << 8) | ((minor & 0xffff_ff00) << 12) | (minor & 0xff)
        return FileIdentity(device: device, inode: inode)
    }
}

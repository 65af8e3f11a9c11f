#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// What dpkg's database says about a few programs: the package whose file
/// list names each (`/var/lib/dpkg/info/PACKAGE.list`), whether that
/// package's maintainer script sets the program's capabilities
/// (`PACKAGE.postinst`, as iputils-ping's does with `setcap`), and
/// `dpkg-statoverride`'s entry for it (`/var/lib/dpkg/statoverride`).
///
/// dpkg records each file's path and checksum, not its mode: a packaged
/// program's setuid bit is taken as shipped unless a stat override says
/// otherwise.
struct DebianPackages {
    /// One `dpkg-statoverride` entry: `USER GROUP MODE PATH`.
    struct Override: Equatable {
        var user: String
        var group: String
        var mode: UInt32
    }

    /// Whether the database was there to read (a Debian system).
    private(set) var available = false
    private(set) var owners: [String: String] = [:]
    private(set) var overrides: [String: Override] = [:]
    private let info: String

    /// Looks up `paths` (absolute, as the walk found them) in the lists of `info`.
    init(paths: Set<String>, info: String, statOverride: String, listLimit: Int) {
        self.info = info
        guard let folder = try? FileDescriptor.open(info, O_RDONLY | O_DIRECTORY),
              let entries = try? folder.readDirectory() else { return }
        available = true
        readOverrides(statOverride)
        guard !paths.isEmpty else { return }
        // Each path as a list may write it (`/bin/su` for `/usr/bin/su` on a merged /usr), by length first:
        // most of the lists' hundred thousand lines are then passed over with one comparison.
        var wanted: [[UInt8]: String] = [:]
        let merged = Self.mergedFolders()
        for path in paths {
            wanted[Array(path.utf8)] = path
            for alias in merged where path.hasPrefix("/usr" + alias) {
                wanted[Array(path.dropFirst("/usr".count).utf8)] = path
            }
        }
        let lengths = Set(wanted.keys.map(\.count))
        for entry in entries.prefix(listLimit) where entry.name.display.hasSuffix(".list") {
            let package = String(entry.name.display.dropLast(".list".count))
            guard let list = try? folder.openChild(entry.name, flags: O_RDONLY),
                  let bytes = try? list.readAll(limit: 64 << 20) else { continue }
            bytes.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                var start = 0
                while start < buffer.count {
                    let rest = buffer.count - start
                    let end = memchr(base + start, 0x0A, rest).map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? buffer.count
                    if lengths.contains(end - start), let path = wanted[Array(buffer[start..<end])] { owners[path] = package }
                    start = end + 1
                }
            }
        }
    }

    /// Whether `package`'s `postinst` names the program (`/NAME`, as in
    /// `/bin/ping` or its full path) and every one of `capabilities`.
    func setsCapabilities(_ capabilities: [String], of path: String, package: String) -> Bool {
        guard let bytes = try? FileDescriptor.readFile("\(info)/\(package).postinst", limit: 1 << 20) else { return false }
        let name = "/" + (path.split(separator: "/").last.map(String.init) ?? path)
        return Self.contains(bytes, name) && capabilities.allSatisfy { Self.contains(bytes, $0) }
    }

    private mutating func readOverrides(_ path: String) {
        guard let bytes = try? FileDescriptor.readFile(path, limit: 4 << 20) else { return }
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let words = line.split(separator: UInt8(ascii: " "), maxSplits: 3).map { String(decoding: $0, as: UTF8.self) }
            guard words.count == 4, let mode = UInt32(words[2], radix: 8) else { continue }
            overrides[words[3]] = Override(user: words[0], group: words[1], mode: mode)
        }
    }

    /// `/bin/`, `/sbin/`, `/lib…/` where they are links into `/usr` (merged
    /// /usr): a package listing `/bin/su` ships `/usr/bin/su`.
    private static func mergedFolders() -> [String] {
        ["bin", "sbin", "lib", "lib32", "lib64", "libx32"].compactMap { name in
            var status = stat()
            guard lstat("/\(name)", &status) == 0, status.st_mode & S_IFMT == S_IFLNK,
                  let resolved = realpath("/\(name)", nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved) == "/usr/\(name)" ? "/\(name)/" : nil
        }
    }

    /// Whether `needle` occurs in `haystack`, by bytes (no string search that would link the regex engine).
    private static func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

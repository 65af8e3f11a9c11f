#if canImport(Glibc)
import Glibc
#endif

/// A program installed with the running one (the desktop agent beside
/// familyctl, the inspector beside the Guard): where to look for it.
package enum CompanionProgram {
    /// The places `name` may be, in the order to try: beside the running
    /// program (a build folder), then in `../libexec/familycontrols/` from
    /// it (`/usr/bin` or `/usr/sbin` → `/usr/libexec/familycontrols`). Read
    /// from `/proc/self/exe`, which names the very file running; when that
    /// cannot be read, from `fallback` (the usual place of the running program).
    package static func candidates(named name: String, fallback: String) -> [String] {
        let folder = parent(of: running(fallback: fallback))
        return [folder + "/" + name, parent(of: folder) + "/libexec/familycontrols/" + name]
    }

    /// `path` up to its last `/` ("" when it has none).
    private static func parent(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[..<$0]) } ?? ""
    }

    /// The running program's own file (`/proc/self/exe`, which names the
    /// very file running even after a rename); `fallback` when it cannot be read.
    package static func running(fallback: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : fallback
    }

    /// The status of `path` when it is a regular file; nil otherwise.
    package static func regularFile(_ path: String) -> stat? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return info
    }
}

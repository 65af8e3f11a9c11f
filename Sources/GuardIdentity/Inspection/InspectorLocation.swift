#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// Where the inspector is, and whom it runs as.
enum InspectorLocation {
    /// The inspector's file name.
    static let name = "familycontrols-inspect"

    /// The inspector installed with the running program: beside it (a build
    /// folder), or in `../libexec/familycontrols/` from it (`/usr/sbin` →
    /// `/usr/libexec/familycontrols`), whichever is root's file that no one
    /// else may change; else the second, to fail with its name.
    static func program() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let own = count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "/usr/sbin/x"
        let folder = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let installed = folder.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            + "/libexec/familycontrols/" + name
        for candidate in [folder + "/" + name, installed] {
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == 0, info.st_mode & 0o022 == 0 {
                return candidate
            }
        }
        return installed
    }

    /// `nobody`, or 65534 where the user database has none.
    static let nobody: (uid: uid_t, gid: gid_t) = {
        guard let account = try? UserDatabase.user(named: "nobody") else { return (65534, 65534) }
        return (account.uid, account.gid)
    }()
}

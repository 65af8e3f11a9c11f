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
        let candidates = CompanionProgram.candidates(named: name, fallback: "/usr/sbin/familycontrolsd")
        return candidates.first { candidate in
            CompanionProgram.regularFile(candidate).map { $0.st_uid == 0 && $0.st_mode & 0o022 == 0 } ?? false
        } ?? candidates[1]
    }

    /// `nobody`, or 65534 where the user database has none.
    static let nobody: (uid: uid_t, gid: gid_t) = {
        guard let account = try? UserDatabase.user(named: "nobody") else { return (65534, 65534) }
        return (account.uid, account.gid)
    }()
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The file of a PAM service in a pam.d folder, checked before libpam reads
/// it: libpam quietly falls back to the `other` service when the file is
/// missing, which skips whatever the site put in the service (faillock,
/// group checks, one-time codes), so a missing or unsafe file is refused.
package enum PAMServiceFile {
    /// Where libpam reads services when no folder is given.
    package static let systemDirectory = "/etc/pam.d"

    /// `DIR/SERVICE`, with `DIR` the given folder or ``systemDirectory``.
    package static func path(of service: String, in directory: String?) -> String {
        (directory ?? systemDirectory) + "/" + service
    }

    /// What makes `service` unfit to authenticate on: missing, not a regular
    /// file, or open to change by someone other than root; nil when it is fit.
    package static func problem(service: String, directory: String?) -> String? {
        let path = path(of: service, in: directory)
        var status = stat()
        guard stat(path, &status) == 0 else {
            let code = errno
            return code == ENOENT ? "\(path) does not exist" : "\(path) cannot be read: \(Errno(code, operation: "stat"))"
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        guard status.st_uid == 0 else { return "\(path) belongs to uid \(status.st_uid), not root" }
        guard status.st_mode & 0o022 == 0 || (status.st_mode & 0o002 == 0 && status.st_gid == 0) else {
            return "\(path) can be changed by users other than root (mode \(String(status.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }
}

import CPAM
import SystemKit

/// What the PAM modules of one call log through `pam_syslog`, read back by
/// the process that runs them (the PAM helper), so the Guard learns what a
/// stack hid from its result.
///
/// Debian's `common-auth` ends in `requisite pam_deny.so`: when pam_sss
/// cannot reach the directory it answers `PAM_AUTHINFO_UNAVAIL`, the stack
/// goes on to pam_deny and the call returns `PAM_AUTH_ERR`, a wrong password.
/// pam_sss logs its own answer first ("received for user bob: 9 (…)"), and
/// that line is what tells the two apart. The lines still reach syslog.
package enum ModuleLog {
    /// The most read back from one call; a module that logs more loses the rest here only.
    static let capacity = 64 * 1024

    /// Runs `body` with this process's syslog lines also written to a pipe,
    /// and returns its result with what was written. When the pipe cannot
    /// be set up, `body` runs as it would have and the text is empty.
    static func reading<R>(_ body: () -> R) -> (result: R, text: String) {
        var saved: CInt = -1
        let reader = cpam_module_log_begin(&saved)
        guard reader >= 0 else { return (body(), "") }
        let result = body()
        var buffer = [UInt8](repeating: 0, count: capacity)
        let length = buffer.withUnsafeMutableBytes { bytes in
            cpam_module_log_end(reader, saved, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        return (result, String(decoding: buffer.prefix(length), as: UTF8.self))
    }

    /// Whether pam_sss said, in `text`, that it could not reach the directory
    /// for `user` (its answer `PAM_AUTHINFO_UNAVAIL` for that user, or a
    /// request SSSD itself could not take), and no module but pam_unix and
    /// pam_sss logged anything: behind a stack with another password module
    /// (pam_krb5, pam_winbind) that module may be the one that refused, and
    /// a child who took the network down must not have its guesses uncounted.
    package static func saysDirectoryUnreachable(_ text: String, user: String) -> Bool {
        let answer = "): received for user \(user): \(PAM_AUTHINFO_UNAVAIL) ("
        var unreachable = false
        for line in text.split(separator: "\n") {
            switch module(of: line) {
            case "pam_sss":
                if line.containsBytes(of: answer) || line.containsBytes(of: "): Request to sssd failed.") { unreachable = true }
            case "pam_unix", nil: continue
            default: return false
            }
        }
        return unreachable
    }

    /// The module a `pam_syslog` line comes from (`familycontrolsd[7]:
    /// pam_sss(familycontrols-guardian:auth): …` is pam_sss's); nil for a
    /// line of another form.
    package static func module(of line: Substring) -> Substring? {
        guard let open = line.firstIndex(of: "("), line[open...].containsBytes(of: ":auth): ") else { return nil }
        let name = line[..<open].split(separator: " ").last ?? line[..<open]
        return name.hasPrefix("pam_") ? name : nil
    }
}

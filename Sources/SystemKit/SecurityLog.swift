internal import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// The system log's `authpriv` facility, where sudo, sshd and PAM report
/// who authenticated and who failed: an administrator's log watcher (or
/// fail2ban) sees a guardian's password being guessed there too.
///
/// One line per event, control characters escaped; never a secret.
public enum SecurityLog {
    /// syslog priorities, as sudo uses them: `alert` for a failed
    /// authentication, `notice` for what was allowed.
    public enum Priority: Int32, Sendable {
        case alert = 1, warning = 4, notice = 5, info = 6
    }

    /// Sends `message` to `authpriv` at `priority`.
    public static func log(_ priority: Priority, _ message: String) {
        csystem_syslog(CSYSTEM_LOG_AUTHPRIV, priority.rawValue, DisplayText.sanitized(message))
    }
}

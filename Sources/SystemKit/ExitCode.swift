/// The exit statuses of `familyctl` and `familycontrolsd`, as documented in
/// their man pages.
package enum ExitCode: Int32, Sendable {
    /// The command did what was asked.
    case success = 0
    /// The action was refused or failed (authentication failed, drift found).
    case failure = 1
    /// The command line was wrong.
    case usage = 2
    /// The configuration file is invalid.
    case configuration = 3
    /// The command needs root.
    case permission = 4
    /// The Guard could not be reached.
    case unavailable = 5
    /// `-H`: ssh(1) could not reach or log in to the machine.
    case hostUnreachable = 6
    /// `-H`: the machine has no `familyctl` to carry the connection to its Guard.
    case notInstalledOnHost = 7
}

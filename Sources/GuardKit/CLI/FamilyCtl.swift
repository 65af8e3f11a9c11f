import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// `familyctl`, the administrator's command: "Settings" for FamilyControls,
/// used the way `sudo` is used.
package enum FamilyCtl {
    package static let usage = """
        usage: familyctl [--socket PATH] VERB [OPTIONS]

        Verbs:
          authenticate USER --member child|individual [--pam-dir DIR] [--config FILE]
                       [--child USER] [--stdin]
                          Check a user's password through the FamilyControls PAM
                          services (child: familycontrols-guardian, individual:
                          familycontrols-individual). Needs root.

        Options:
          -h, --help      Show this help.
          --version       Show the version.

        See familyctl(8).
        """

    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    package static func main(_ arguments: [String]) -> Int32 {
        let verbs = ["authenticate"]
        // Global options may come before or after the verb: find the verb first.
        guard let verbIndex = arguments.firstIndex(where: { verbs.contains($0) }) else {
            if arguments.contains("--help") || arguments.contains("-h") {
                print(usage)
                return ExitCode.success.rawValue
            }
            if arguments.contains("--version") {
                print("familyctl \(FamilyControlsVersion.string)")
                return ExitCode.success.rawValue
            }
            let word = arguments.first(where: { !$0.hasPrefix("-") })
            writeToStandardError(word.map { "familyctl: unknown verb \"\($0.clipped)\"\n" } ?? "familyctl: no verb given\n")
            writeToStandardError(usage + "\n")
            return ExitCode.usage.rawValue
        }
        var rest = arguments
        let verb = rest.remove(at: verbIndex)
        do throws(CommandFailure) {
            switch verb {
            default:
                try authenticate(rest)
            }
            return ExitCode.success.rawValue
        } catch {
            writeToStandardError("familyctl: \(error.message)\n")
            if error.code == .usage { writeToStandardError("Try 'familyctl --help'.\n") }
            return error.code.rawValue
        }
    }

    /// Fails unless the process runs as root, with sudo's hint.
    static func requireRoot(_ verb: String) throws(CommandFailure) {
        guard geteuid() == 0 else {
            throw CommandFailure(.permission, "this command must be run as root (try: sudo familyctl \(verb) …)")
        }
    }
}

/// Why a verb failed, with the exit status to return.
struct CommandFailure: Error {
    var code: ExitCode
    var message: String
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }
    init(_ usage: UsageError) {
        self.init(.usage, usage.description)
    }
}

/// The version of the FamilyControls tools.
package enum FamilyControlsVersion {
    package static let string = "0.1.0"
}

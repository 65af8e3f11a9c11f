import SystemKit
#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel

/// `familyctl`, the administrator's command: "Settings" for FamilyControls,
/// used the way `sudo` is used.
package enum FamilyCtl {
    package static let usage = """
        usage: familyctl [--socket PATH] VERB [OPTIONS]

        Verbs:
          requests [--watch] [--json]
                          The requests of your children waiting for you to decide
                          (all of them for root); --watch shows new ones as they come.
          approve ID [--stdin]
          deny ID [--stdin]
                          Decide request ID, after authenticating as yourself on this
                          terminal (root is not asked): approve locks the app.
          status [--user USER] [--json]
                          List authorizations: user, app, member, status, who
                          approved, when, lock state, path. Your children's, or all
                          for root.
          set --user USER --app APP approved|denied
                          Approve or deny an app for a child of yours (any user for root).
          revoke --user USER --app APP
                          Revoke an app's authorization; its lock is released. A
                          guardian for their own children, root for anyone.
          graduate USER   A child becomes an adult: revoke every child approval. Needs root.
          locks verify [--no-repair]
                          Check every lock against the store; repair drift. Exits 1
                          when drift was found. Needs root.
          authenticate USER --member child|individual [--pam-dir DIR] [--config FILE]
                       [--child USER] [--stdin]
                          Check a user's password through the FamilyControls PAM
                          services (child: familycontrols-guardian, individual:
                          familycontrols-individual). Needs root.

        Options:
          --socket PATH   The Guard's socket (default $FAMILYCONTROLS_SOCKET or
                          /run/familycontrols/guard.socket); before or after the verb.
          -h, --help      Show this help.
          --version       Show the version.

        See familyctl(8).
        """

    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    package static func main(_ arguments: [String]) -> Int32 {
        let verbs = ["authenticate", "status", "set", "revoke", "graduate", "locks", "requests", "approve", "deny"]
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
            let socket = try takeSocketOption(&rest)
            if rest.contains("--help") || rest.contains("-h") {
                print(usage)
                return ExitCode.success.rawValue
            }
            switch verb {
            case "status": try status(rest, socket: socket)
            case "set": try set(rest, socket: socket)
            case "revoke": try revoke(rest, socket: socket)
            case "graduate": try graduate(rest, socket: socket)
            case "locks": try locks(rest, socket: socket)
            case "requests": try requests(rest, socket: socket)
            case "approve": try decide(rest, approve: true, socket: socket)
            case "deny": try decide(rest, approve: false, socket: socket)
            default: try authenticate(rest)
            }
            return ExitCode.success.rawValue
        } catch {
            writeToStandardError("familyctl: \(error.message)\n")
            if error.code == .usage { writeToStandardError("Try 'familyctl --help'.\n") }
            return error.code.rawValue
        }
    }

    /// Removes the global `--socket PATH` (or `--socket=PATH`) wherever it stands.
    static func takeSocketOption(_ tokens: inout [String]) throws(CommandFailure) -> String? {
        var socket: String?
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if token == "--" { break }
            if token == "--socket" {
                guard index + 1 < tokens.count else { throw CommandFailure(.usage, "--socket needs a value") }
                socket = tokens[index + 1]
                tokens.removeSubrange(index...(index + 1))
            } else if token.hasPrefix("--socket=") {
                socket = String(token.dropFirst("--socket=".count))
                tokens.remove(at: index)
            } else {
                index += 1
            }
        }
        return socket
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

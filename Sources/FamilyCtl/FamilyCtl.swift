import SystemKit
#if canImport(Glibc)
import Glibc
#endif
import FamilyControlsModel

/// `familyctl`, the administrator's command: "Settings" for FamilyControls,
/// used the way `sudo` is used.
package enum FamilyCtl {
    /// One verb: how it is written, what it does, and what runs it.
    struct Verb: Sendable {
        var name: String
        /// The synopsis after `familyctl`, one line per form.
        var synopsis: [String]
        /// What it does, a sentence or three.
        var summary: String
        var run: @Sendable (_ tokens: [String], _ socket: String?, _ desktop: DesktopLibraries?) throws(CommandFailure) -> Void

        /// `familyctl VERB --help`.
        var help: String {
            "usage: " + synopsis.map { form in
                // Continuation lines indented past "usage: familyctl ".
                String(FamilyCtl.wrapped("familyctl \(form)", indent: String(repeating: " ", count: 17)).dropFirst(17))
            }.joined(separator: "\n       ") + "\n\n"
                + wrapped(summary, indent: "") + "\n\nSee familyctl(8)."
        }
    }

    /// What a verb of ``severalHostVerbs`` says of `-H` in its help.
    private static let severalHosts = "-H takes several machines (HOST1,HOST2,… or @FILE), each answer after its "
        + "machine's name."

    static let verbs: [Verb] = [
        Verb(name: "requests", synopsis: ["requests [--watch] [--json]"],
             summary: "The requests of your children waiting for you to decide (all of them for root): to approve "
                + "an app, to revoke it, or to update it (from which version to which); "
                + "--watch shows new ones as they come. " + severalHosts) { tokens, socket, _ throws(CommandFailure) in try requests(tokens, socket: socket) },
        Verb(name: "approve", synopsis: ["approve ID [--minutes N] [--stdin]"],
             summary: "Show request ID, then approve it after authenticating as yourself on this terminal (root is "
                + "not asked; within GuardianTimeout of your last authentication in this terminal session you are not "
                + "asked again); the app is locked (an update: the new version is swapped in, locked; time limits: they take effect; more time: "
                + "the minutes asked, or N with --minutes). --stdin reads the password from standard input.") { tokens, socket, _ throws(CommandFailure) in
            try decide(tokens, approve: true, socket: socket)
        },
        Verb(name: "deny", synopsis: ["deny ID [--stdin]"],
             summary: "Deny request ID after authenticating as yourself on this terminal (root is not asked).") { tokens, socket, _ throws(CommandFailure) in
            try decide(tokens, approve: false, socket: socket)
        },
        Verb(name: "agent", synopsis: ["agent [--if-guardian] [--config FILE]"],
             summary: "Run in your graphical session: each request of your children becomes a desktop notification "
                + "with Approve and Deny; your password is asked by pinentry in your own session and sent over the "
                + "agent's own connection to the Guard. A request decided elsewhere withdraws its notification. "
                + "A child's monitor that keeps ending (see monitors) becomes a notification too, without actions. "
                + "Without a notification server it prints the requests, as requests --watch does, and the monitor "
                + "alerts. --if-guardian "
                + "exits at once for someone who guards nobody (the autostart entry uses it).") { tokens, socket, desktop throws(CommandFailure) in
            // familyctl becomes the program that has the desktop's libraries, which runs the verb.
            guard let desktop else { try AgentProgram.run() }
            try agent(tokens, socket: socket, open: desktop.openNotificationServer)
        },
        Verb(name: "status", synopsis: ["status [--user USER] [--json]"],
             summary: "List authorizations: user, app, member, status, who approved, when, lock state, path. "
                + "Your children's, or everyone's for root. " + severalHosts) { tokens, socket, _ throws(CommandFailure) in try status(tokens, socket: socket) },
        Verb(name: "set", synopsis: ["set --user USER --app APP approved|denied [--stdin]"],
             summary: "Approve or deny an app for a child of yours (any user for root), after authenticating as "
                + "yourself as for approve.") { tokens, socket, _ throws(CommandFailure) in
            try set(tokens, socket: socket)
        },
        Verb(name: "revoke", synopsis: ["revoke --user USER --app APP [--stdin]"],
             summary: "Revoke an app's authorization; its lock is released. A guardian for their own children, "
                + "after authenticating as yourself as for approve; root for anyone.") { tokens, socket, _ throws(CommandFailure) in try revoke(tokens, socket: socket) },
        Verb(name: "graduate", synopsis: ["graduate USER"],
             summary: "A child becomes an adult: revoke every child approval of USER. Needs root.") { tokens, socket, _ throws(CommandFailure) in
            try graduate(tokens, socket: socket)
        },
        Verb(name: "forget", synopsis: ["forget USER"],
             summary: "Remove every record of USER, whose account no longer exists: their authorizations (a child's "
                + "locks released first) and their one-time code. The audit trail keeps what happened. Needs root.") { tokens, socket, _ throws(CommandFailure) in
            try forget(tokens, socket: socket)
        },
        Verb(name: "log", synopsis: ["log [--user USER] [--app APP] [--since TIME] [--limit N] [--json]"],
             summary: "The audit trail, oldest first: who requested, approved, denied, revoked or failed to "
                + "authenticate, and when. TIME is 2026-11-30, \"2026-11-30 08:00\", today, yesterday, or an age "
                + "such as 90min, 12h or 7d. The newest N events (default 1000, at most 2000). Your children's, "
                + "or everyone's for root. " + severalHosts) { tokens, socket, _ throws(CommandFailure) in try log(tokens, socket: socket) },
        Verb(name: "monitors", synopsis: ["monitors [--json]"],
             summary: "The monitors the Guard runs: for each approved app that declares one (X-FamilyControls-Monitor=), "
                + "in each login session of the child, whether it runs (its pid, since when), waits to be started "
                + "again (when, after what), and how often it was restarted. Your children's, everyone's for root, "
                + "your own otherwise. " + severalHosts) { tokens, socket, _ throws(CommandFailure) in try monitors(tokens, socket: socket) },
        Verb(name: "limits", synopsis: ["limits [--user USER] [--json]",
                                        "limits set --user USER --app APP [--hours WINDOWS] [--daily DURATION] [--at-end lock|end] [--stdin]",
                                        "limits clear --user USER --app APP [--stdin]",
                                        "limits more --user USER --minutes N [--stdin]"],
             summary: "The time limits approved apps keep for your children (everyone's for root): the hours they "
                + "may be logged in, the daily time, what happens when time is up, which app set them, today's time "
                + "used and left, and when they may next log in. set changes an app's (WINDOWS like \"Mon-Fri "
                + "07:30-20:00,Sat-Sun 09:00-21:00\", DURATION like 90m or 2h, in this machine's local time; "
                + "unlimited lifts either), clear removes them, more gives N more minutes today (outside the "
                + "hours, also lets them log in for that long). Changes authenticate as for approve; "
                + "approve ID --minutes N decides a request for more time.") { tokens, socket, _ throws(CommandFailure) in
            try limits(tokens, socket: socket)
        },
        Verb(name: "locks", synopsis: ["locks verify [--no-repair]"],
             summary: "Check every lock against the store, repair drift and finish unlocks a lease held up "
                + "(the Guard also does this every [Locks] VerifyInterval=). Exits 1 when drift was found. "
                + "Needs root.") { tokens, socket, _ throws(CommandFailure) in try locks(tokens, socket: socket) },
        Verb(name: "code", synopsis: ["code enroll [--stdin]", "code remove [USER]"],
             summary: "Your one-time code, for approving at a child's screen: enroll makes a new secret after you "
                + "authenticate as for approve (replacing any you had) and shows it once, as a QR code and an "
                + "otpauth:// URI, for any authenticator app; a child's app then offers \"a parent or guardian is "
                + "here\", which takes your user name and the current code. remove removes yours; root may remove "
                + "anyone's.") { tokens, socket, desktop throws(CommandFailure) in
            try code(tokens, socket: socket, desktop: desktop)
        },
        Verb(name: "authenticate",
             synopsis: ["authenticate USER --member child|individual [--pam-dir DIR] [--config FILE] [--child USER] [--stdin]"],
             summary: "Check a user's password through the FamilyControls PAM services (child: the guardian "
                + "service, individual: the individual service), as the Guard would. Needs root.") { tokens, _, _ throws(CommandFailure) in
            try authenticate(tokens)
        },
        Verb(name: "help", synopsis: ["help [VERB]"], summary: "Show this help, or one verb's.") { tokens, _, _ throws(CommandFailure) in
            try help(tokens)
        },
    ]

    /// The verbs that only read, which `-H` may send to several machines at
    /// once; a verb that decides or changes something goes to one machine.
    static let severalHostVerbs: Set<String> = ["requests", "status", "log", "monitors"]

    package static var usage: String {
        var text = "usage: familyctl [--socket PATH] VERB [OPTIONS]\n"
            + "       familyctl -H [USER@]HOST[:PORT][,HOST2…] VERB [OPTIONS]\n"
            + "       familyctl -H @FILE VERB [OPTIONS]\n\nVerbs:\n"
        for verb in verbs {
            for form in verb.synopsis {
                // A long synopsis continues on an indented line, as man(1) shows it.
                let lines = wrapped(form, indent: "      ").split(separator: "\n")
                text += "  " + lines[0].drop(while: { $0 == " " }) + "\n" + lines.dropFirst().map { "\($0)\n" }.joined()
            }
            text += wrapped(verb.summary, indent: "                  ") + "\n"
        }
        text += """

            Options:
              --socket PATH   The Guard's socket (default $\(GuardEndpoint.socketVariable) or
                              \(GuardEndpoint.defaultSocket)); before or after the verb.
              -H, --host [USER@]HOST[:PORT]
                              Run the verb against the Guard on HOST, over ssh(1)
                              (FAMILYCTL_SSH names another ssh); the password is
                              asked here and checked on HOST. requests, status,
                              log and monitors take several: HOST1,HOST2,… or
                              @FILE, a file of one HOST a line (# comments); each
                              line after its host's name, each --json row with a
                              "host" field (requests: one object a host).
              -h, --help      Show this help; after a verb, that verb's.
              --version       Show the version.

            Exit status: 0 done, 1 refused or failed, 2 usage, 3 configuration,
            4 needs root, 5 the Guard could not be reached, 6 -H: HOST could not
            be reached over SSH, 7 -H: HOST has no familyctl. See familyctl(8).
            """
        return text
    }

    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    /// - Parameter desktop: the libraries only the `familycontrols-agent`
    ///   program loads; nil in familyctl, which becomes that program to run
    ///   the verbs that need them (``AgentProgram``).
    package static func main(_ arguments: [String], desktop: DesktopLibraries? = nil) -> Int32 {
        do throws(CommandFailure) {
            var rest = arguments
            let socket = try takeSocketOption(&rest)
            let hosts = try takeHostOption(&rest)
            if rest.first == "--stdio-bridge" {
                guard rest.count == 1, hosts.isEmpty else {
                    throw CommandFailure(.usage, "--stdio-bridge takes no verb and no -H (only --socket)")
                }
                try stdioBridge(socket: socket)
                return ExitCode.success.rawValue
            }
            if !hosts.isEmpty, socket != nil {
                throw CommandFailure(.usage, "--socket names a socket on this machine; with -H the Guard's socket "
                    + "on the other machine is its default")
            }
            // The verb is the first word that is not an option.
            guard let verbIndex = rest.firstIndex(where: { !$0.hasPrefix("-") }) else {
                if rest.contains("--help") || rest.contains("-h") {
                    print(usage)
                    return ExitCode.success.rawValue
                }
                if rest.contains("--version") {
                    print("familyctl \(FamilyControlsVersion.string)")
                    return ExitCode.success.rawValue
                }
                if let option = rest.first {
                    throw CommandFailure(.usage, "unknown option \"\(option.clipped)\" (options come with a verb)")
                }
                // Nothing at all: the overview, as sudo and systemctl answer.
                writeToStandardError(usage + "\n")
                return ExitCode.usage.rawValue
            }
            if let option = rest[..<verbIndex].first(where: { !["--help", "-h", "--version"].contains($0) }) {
                throw CommandFailure(.usage, "unknown option \"\(option.clipped)\" before the verb")
            }
            let leading = rest[..<verbIndex]
            let name = rest.remove(at: verbIndex)
            rest.removeFirst(verbIndex)
            guard let verb = verbs.first(where: { $0.name == name }) else {
                throw CommandFailure(.usage, "unknown verb \"\(name.clipped)\"" + suggestion(for: name))
            }
            if leading.contains("--version") {
                print("familyctl \(FamilyControlsVersion.string)")
                return ExitCode.success.rawValue
            }
            if leading.contains("--help") || leading.contains("-h") || rest.contains("--help") || rest.contains("-h") {
                print(verb.help)
                return ExitCode.success.rawValue
            }
            if !hosts.isEmpty {
                if verb.name == "authenticate" {
                    throw CommandFailure(.usage, "authenticate checks passwords on this machine; it takes no -H")
                }
                if hosts.count > 1 && !severalHostVerbs.contains(verb.name) {
                    throw CommandFailure(.usage, "\(name) works on one machine at a time, but -H names \(hosts.count) "
                        + "(only requests, status, log and monitors take several)")
                }
                GuardConnection.remoteHosts = hosts
            }
            defer { GuardConnection.remoteHosts = [] }
            try verb.run(rest, socket, desktop)
            return ExitCode.success.rawValue
        } catch {
            writeToStandardError("familyctl: \(error.message)\n")
            if error.code == .usage { writeToStandardError("Try 'familyctl help'.\n") }
            return error.code.rawValue
        }
    }

    /// `familyctl help [VERB]`.
    static func help(_ tokens: [String]) throws(CommandFailure) {
        guard let name = tokens.first else {
            print(usage)
            return
        }
        guard tokens.count == 1, let verb = verbs.first(where: { $0.name == name }) else {
            throw CommandFailure(.usage, "help takes one verb, found \"\(tokens.joined(separator: " ").clipped)\"" + suggestion(for: name))
        }
        print(verb.help)
    }

    /// ", did you mean …?" for a verb one letter off, or nothing.
    static func suggestion(for word: String) -> String {
        let close = verbs.map(\.name).filter { distance($0, word) <= 2 }
        return close.isEmpty ? "" : " (did you mean \(close.joined(separator: " or "))?)"
    }

    /// Levenshtein distance, for suggestions.
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let old = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = old
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    /// `text` wrapped at 78 columns, each line after `indent`.
    static func wrapped(_ text: String, indent: String) -> String {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && indent.count + line.count + 1 + word.count > 78 {
                lines.append(indent + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(indent + line) }
        return lines.joined(separator: "\n")
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

    /// `-H [USER@]HOST[:PORT],…` or `-H @FILE` (or `--host`), wherever it stands: the
    /// machines whose Guard the verb talks to, through ssh.
    static func takeHostOption(_ tokens: inout [String]) throws(CommandFailure) -> [RemoteHost] {
        var hosts: [RemoteHost] = []
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            if token == "--" { break }
            if token == "-H" || token == "--host" {
                guard index + 1 < tokens.count else { throw CommandFailure(.usage, "\(token) needs [USER@]HOST[:PORT] or @FILE") }
                hosts = try RemoteHost.list(tokens[index + 1])
                tokens.removeSubrange(index...(index + 1))
            } else if token.hasPrefix("--host=") {
                hosts = try RemoteHost.list(String(token.dropFirst("--host=".count)))
                tokens.remove(at: index)
            } else {
                index += 1
            }
        }
        return hosts
    }

    /// Fails unless the process runs as root, with sudo's hint. With `-H`
    /// the Guard on the other machine decides, by the user ssh logged in as.
    static func requireRoot(_ verb: String) throws(CommandFailure) {
        guard GuardConnection.remoteHosts.isEmpty else { return }
        guard geteuid() == 0 else {
            throw CommandFailure(.permission, "this command must be run as root (try: sudo familyctl \(verb) …)")
        }
    }
}

/// Why a verb failed, with the exit status to return.
struct CommandFailure: Error {
    var code: ExitCode
    var message: String
    /// The Varlink error the Guard answered with, when it did (such as
    /// `org.varlink.service.MethodNotFound` from an older Guard).
    var remoteError: String?
    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }
    init(_ usage: UsageError) {
        self.init(.usage, usage.description)
    }
}


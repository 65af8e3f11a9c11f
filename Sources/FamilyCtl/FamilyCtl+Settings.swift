import FamilyControlsModel
#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit
import Varlink

extension FamilyCtl {
    /// `familyctl status [--user USER] [--json]`
    static func status(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user"], flags: ["--json"])
        guard arguments.operands.isEmpty else { throw CommandFailure(.usage, "status takes no operands; use --user USER") }
        if GuardConnection.remoteHosts.count > 1 {
            return try status(on: GuardConnection.remoteHosts, user: arguments["--user"], json: arguments.has("--json"))
        }
        let guardConnection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let reply = try guardConnection.call(Guard.ListAuthorizations.self, .init(user: arguments["--user"]))
        let rows = reply.authorizations
        if let warning = standingWarning(reply.warnings) { writeToStandardError(warning + "\n") }
        print(arguments.has("--json") ? statusJSON(rows) : statusText(rows, user: arguments["--user"]))
    }

    /// What `status` prints for `rows`, asked with `--user user`: the table,
    /// or why there is nothing to show.
    static func statusText(_ rows: [Guard.Authorization], user: String?) -> String {
        // Not root and nothing shown: most likely not a guardian at all.
        guard !rows.isEmpty || geteuid() == 0 || user != nil else {
            return "No authorizations you may see: familyctl status lists the authorizations of your children "
                + "(everyone's, for root). An app shows its own status."
        }
        return statusTable(rows)
    }

    /// The one line root sees when a child can become someone else (the
    /// Guard sends these to root only), on standard error so `--json` stays clean.
    static func standingWarning(_ warnings: [String]?) -> String? {
        guard let warnings, let first = warnings.first else { return nil }
        let more = warnings.count > 1 ? " and \(warnings.count - 1) more" : ""
        return "warning: \(DisplayText.sanitized(first))\(more); see familycontrolsd --check-config"
    }

    /// The documented `--json` form: the `ListAuthorizations` reply as the
    /// interface types it, `{"authorizations": [ … ]}`, one object per
    /// authorization with `user`, `app`, `name` (the app's name as its
    /// alert showed it; null when not known), `member`, `status`, `approvedBy`
    /// (null when none), `updatedAt` (ISO 8601, UTC), `path` and `lock`, and
    /// for a Flatpak app `flatpak` (`id`, `installation`, `arch`, `branch`,
    /// `commit`, `deployment`).
    static func statusJSON(_ rows: [Guard.Authorization]) -> String {
        Guard.ListAuthorizations.Reply(authorizations: rows).json(floats: isoDate)
    }

    /// What became of an authorization, in a parent's words: the app (its
    /// name when known, else its ID), the child, and what the lock means
    /// for them.
    static func outcomeText(_ authorization: Guard.Authorization, name: String? = nil) -> String {
        let app = (name ?? authorization.name).map { "“\(DisplayText.sanitized($0))”" } ?? DisplayText.sanitized(authorization.app)
        let child = DisplayText.sanitized(authorization.user)
        switch authorization.status {
        case .approved:
            switch authorization.lock {
            case .locked: return "\(app) is approved for \(child); its folder is locked, so \(child) cannot remove or change it"
            case .notNeeded: return "\(app) is approved for \(child); it is installed where \(child) cannot remove or change it"
            case .unenforced:
                return "\(app) is approved for \(child), but its folder could not be locked ("
                    + DisplayText.sanitized(authorization.lockReason ?? "no reason given") + "): \(child) could still remove it"
            case .missing, .locking, .unlocking, .unlocked:
                return "\(app) is approved for \(child), but its folder is not locked yet (familyctl locks verify repairs it)"
            }
        case .denied: return "\(app) is not allowed for \(child)"
        case .notDetermined: return "\(app) is no longer approved for \(child), who may remove it"
        }
    }

    /// An authorization's lock in words: `locked`, `unenforced: REASON`,
    /// `not needed: …`, made safe to show (a reason may quote a file name).
    static func lockText(_ authorization: Guard.Authorization) -> String {
        switch authorization.lock {
        case .unenforced: "unenforced: " + DisplayText.sanitized(authorization.lockReason ?? "no reason given")
        case .notNeeded: "not needed: a root-owned Flatpak installation"
        case .missing: "missing: approved but not locked"
        default: authorization.lock.rawValue
        }
    }

    static func statusTable(_ rows: [Guard.Authorization]) -> String {
        guard !rows.isEmpty else { return "No authorizations." }
        let header = ["USER", "APP", "NAME", "MEMBER", "STATUS", "APPROVED BY", "UPDATED", "LOCK", "PATH"]
        let table: [[String]] = rows.map { row in
            // A Flatpak app shows its Flatpak ID and the deployment approved, as `flatpak` names them.
            let path = row.flatpak.map { "flatpak \($0.installation) \($0.id) \($0.commit.prefix(12)): \($0.deployment)" }
            return [row.user, row.app, row.name ?? "-", row.member.rawValue, row.status.rawValue, row.approvedBy ?? "-",
                    localDate(row.updatedAt), lockText(row), path ?? row.path]
        }
        return columns([header] + table)
    }

    /// Rows as aligned columns, every cell made safe to show (a path or a
    /// name a child chose may hold control characters).
    static func columns(_ rows: [[String]]) -> String {
        let rows = rows.map { $0.map { DisplayText.sanitized($0) } }
        let widths = (rows.first ?? []).indices.map { column in
            rows.map { $0[column].count }.max() ?? 0
        }
        return rows.map { cells in
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - cell.count))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// A time for `--json`: ISO 8601 in UTC, for scripts.
    static func isoDate(_ seconds: Double) -> String {
        UnixTime(seconds: seconds).iso8601
    }

    /// A time for people: the machine's local time, as `log` and
    /// `monitors` show it.
    static func localDate(_ seconds: Double) -> String {
        UnixTime(seconds: seconds).localDescription
    }

    /// `familyctl set --user USER --app APP approved|denied`
    static func set(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--app"], flags: ["--stdin"])
        guard let user = arguments["--user"], let app = arguments["--app"] else {
            throw CommandFailure(.usage, "set needs --user USER and --app APP")
        }
        guard arguments.operands.count == 1, let status = arguments.operands.first.flatMap(Guard.Status.init(rawValue:)),
              status == .approved || status == .denied else {
            throw CommandFailure(.usage, "set needs a status: approved or denied")
        }
        let reply = try changeProtection(Guard.SetStatus.self, .init(user: user, app: app, status: status),
                                         stdin: arguments.has("--stdin"), socket: socket)
        print("familyctl: " + (reply.authorization.map { outcomeText($0) } ?? "\(app) for \(user) is now \(status)"))
    }

    /// `familyctl revoke --user USER --app APP`
    static func revoke(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--app"], flags: ["--stdin"])
        guard let user = arguments["--user"], let app = arguments["--app"], arguments.operands.isEmpty else {
            throw CommandFailure(.usage, "revoke needs --user USER and --app APP")
        }
        _ = try changeProtection(Guard.Revoke.self, .init(user: user, app: app), stdin: arguments.has("--stdin"),
                                 socket: socket)
        print("familyctl: revoked \(app) for \(user)")
    }

    /// `familyctl graduate USER`
    static func graduate(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens)
        guard arguments.operands.count == 1, let user = arguments.operands.first else {
            throw CommandFailure(.usage, "graduate needs one user name")
        }
        try requireRoot("graduate")
        let reply = try GuardConnection(socket: GuardConnection.socketPath(socket)).call(Guard.Graduate.self, .init(user: user))
        let revoked = reply.revoked ?? []
        print(revoked.isEmpty ? "familyctl: \(user) had no approved child apps"
                              : "familyctl: \(user) graduated; revoked \(revoked.joined(separator: ", "))")
    }

    /// `familyctl forget USER`
    static func forget(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens)
        guard arguments.operands.count == 1, let user = arguments.operands.first else {
            throw CommandFailure(.usage, "forget needs one user name")
        }
        try requireRoot("forget")
        let removed = try GuardConnection(socket: GuardConnection.socketPath(socket)).call(Guard.Forget.self, .init(user: user)).removed
        let shown = DisplayText.sanitized(user)
        print(removed.isEmpty ? "familyctl: the Guard had no records of \(shown)"
                              : "familyctl: forgot \(shown): \(removed.map { DisplayText.sanitized($0) }.joined(separator: ", "))")
    }

    /// `familyctl locks verify`: exits 1 when drift was found (and repaired).
    static func locks(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, flags: ["--no-repair"])
        guard arguments.operands == ["verify"] else {
            throw CommandFailure(.usage, "locks takes one subcommand: verify")
        }
        try requireRoot("locks verify")
        let reply = try GuardConnection(socket: GuardConnection.socketPath(socket))
            .call(Guard.VerifyLocks.self, .init(repair: !arguments.has("--no-repair")))
        let findings = reply.findings
        guard !findings.isEmpty else {
            print("familyctl: every lock is whole")
            return
        }
        for finding in findings { print(finding) }
        throw CommandFailure(.failure, "\(findings.count) problem(s) found\(arguments.has("--no-repair") ? "" : "; each was repaired where it could be")")
    }

    static func parse(_ tokens: [String], valued: Set<String> = [], flags: Set<String> = []) throws(CommandFailure) -> Arguments {
        do throws(UsageError) {
            return try Arguments(tokens, .init(valued: valued, flags: flags))
        } catch {
            throw CommandFailure(error)
        }
    }
}

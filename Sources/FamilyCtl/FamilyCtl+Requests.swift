#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit
import Varlink
import PAM

// A parent or guardian decides a child's requests from their own session.
extension FamilyCtl {
    /// `familyctl requests [--watch] [--json]`: the requests waiting that the
    /// caller may decide (their children's; all for root).
    static func requests(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, flags: ["--watch", "--json"])
        guard arguments.operands.isEmpty else { throw CommandFailure(.usage, "requests takes no operands") }
        let json = arguments.has("--json")
        if GuardConnection.remoteHosts.count > 1 {
            let hosts = GuardConnection.remoteHosts
            return arguments.has("--watch") ? try watchRequests(on: hosts, json: json) : try requests(on: hosts, json: json)
        }
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        guard arguments.has("--watch") else {
            let rows = try connection.call(Guard.ListRequests.self, .init()).requests
            print(json ? requestsJSON(rows) : requestsTable(rows))
            return
        }
        // Lines as things change, written at once, for a terminal or a pipe.
        var printer = RequestsWatchPrinter(json: json)
        try connection.stream(Guard.WatchRequests.self, .init()) { reply in
            let text = printer.text(for: reply.requests)
            if !text.isEmpty { writeToStandardOutput(text + "\n") }
        }
    }

    /// `familyctl approve ID` and `familyctl deny ID [--stdin]`: PAM
    /// authenticates the caller on this terminal (root is not asked), then
    /// the Guard carries the decision out.
    static func decide(_ tokens: [String], approve: Bool, socket: String?) throws(CommandFailure) {
        let verb = approve ? "approve" : "deny"
        let arguments = try parse(tokens, valued: approve ? ["--minutes"] : [], flags: ["--stdin"])
        guard arguments.operands.count == 1, let text = arguments.operands.first else {
            throw CommandFailure(.usage, "\(verb) needs one request number (see familyctl requests)")
        }
        guard let id = Int64(text), id > 0 else {
            throw CommandFailure(.usage, "\(verb) expects a request number, found \"\(text.clipped)\"")
        }
        let minutes = try arguments["--minutes"].map { text throws(CommandFailure) in try Self.minutes(text) }
        let conversation = try authenticationConversation(stdin: arguments.has("--stdin"))
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        // The app's name as the request shows it, for the result (it is gone once decided);
        // a Guard that cannot be reached says so here, before anything is asked.
        let request = try connection.call(Guard.ListRequests.self, .init()).requests.first { $0.id == id }
        let reply = try connection.converse(Guard.DecideRequest.self, .init(id: id, approve: approve, minutes: minutes),
                                            through: conversation)
        if let request, request.purpose == .limits || request.purpose == .time {
            let given = minutes ?? request.minutes
            print("familyctl: request \(id) " + (approve ? "approved: " + (request.purpose == .time
                ? "\(given.map { "\($0) more minutes" } ?? "more time") today for \(DisplayText.sanitized(request.user))"
                : "the time limits \(DisplayText.sanitized(request.limits ?? "asked for")) are in force")
                : "denied: the time limits in force stay"))
            return
        }
        guard let authorization = reply.authorization else {
            print("familyctl: request \(id) \(approve ? "approved: the app's approval is lifted" : "denied: the approval stays")")
            return
        }
        print("familyctl: request \(id): \(outcomeText(authorization, name: request?.name))")
    }

    /// Where the caller answers the Guard's password prompt: standard input
    /// with `--stdin`, else their controlling terminal.
    /// - Throws: a usage failure when there is neither: nothing is sent.
    static func authenticationConversation(stdin: Bool) throws(CommandFailure) -> any PAMConversation {
        if stdin { return StandardInputConversation() }
        if let terminal = TerminalConversation() { return terminal }
        throw CommandFailure(.usage, "no terminal to authenticate on; use --stdin to read the password from standard input")
    }

    /// Calls `method`, a verb that changes a child's protection. Root is
    /// never asked; anyone else answers the Guard's password prompt on this
    /// terminal or standard input (unless this terminal session authenticated
    /// lately, see `GuardianTimeout=`). With neither, the call cannot be
    /// answered: the Guard then refuses it, saying why, and changes nothing.
    static func changeProtection<Method: GuardMethod>(_ method: Method.Type, _ parameters: Method.Parameters, stdin: Bool,
                                                      socket: String?) throws(CommandFailure) -> Method.Reply
    where Method.Reply: GuardPromptingReply {
        let conversation: (any PAMConversation)? = if geteuid() == 0 {
            nil
        } else if stdin {
            StandardInputConversation()
        } else {
            TerminalConversation()
        }
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        guard let conversation else { return try connection.call(method, parameters) }
        return try connection.converse(method, parameters, through: conversation)
    }

    /// The documented `--json` form: the `ListRequests` reply as the
    /// interface types it, `{"requests": [ … ]}`, one object per request
    /// with `id`, `user`, `app`, `name`, `path`, `purpose`, `created` and
    /// `expires` (ISO 8601, UTC), and for an `update` request `from` and `to`.
    static func requestsJSON(_ rows: [Guard.Request]) -> String {
        Guard.ListRequests.Reply(requests: rows).json(floats: isoDate)
    }

    static func requestsTable(_ rows: [Guard.Request]) -> String {
        guard !rows.isEmpty else { return "No requests are waiting for you." }
        let header = ["ID", "USER", "APP", "NAME", "ASKS TO", "ASKED", "EXPIRES", "PATH"]
        let table: [[String]] = rows.map { row in
            [String(row.id), row.user, row.app, row.name, asksTo(row.purpose),
             localDate(row.created), localDate(row.expires), row.path]
        }
        // An update's versions and keys, and an approval's source, are long: one line each under the table.
        let versions = rows.compactMap { row -> String? in
            switch row.purpose {
            case .update:
                "request \(row.id) updates \(row.app) from \(row.from ?? "?") to \(row.to ?? "?")" + updateKeyText(row)
            case .approve:
                switch (row.to, row.updateKey) {
                case (nil, nil): nil
                case (let source?, _): "request \(row.id) approves \(row.app) at \(source)" + updateKeyText(row)
                case (nil, _): "request \(row.id)" + updateKeyText(row)
                }
            case .revoke:
                nil
            case .limits:
                "request \(row.id): \(row.app) asks for the time limits \(row.limits ?? "?")"
            case .time:
                "request \(row.id): \(row.minutes.map { "\($0) more minutes today" } ?? "more time today")"
                    + (row.reason.map { "; \(row.user) says: “\($0)”" } ?? "")
                    + " (familyctl approve \(row.id) --minutes N gives another number)"
            }
        }
        return columns([header] + table) + versions.map { "\n" + DisplayText.sanitized($0) }.joined()
    }

    /// What a request means for the app's update key, from "; …", or "":
    /// for an approval, the key whose signed versions will go in without
    /// asking; for an update, a change of key and the Guard's note.
    static func updateKeyText(_ row: Guard.Request) -> String {
        func shown(_ key: String?) -> String { key.map { DisplayText.sanitized($0, limit: 80) } ?? "none" }
        switch row.purpose {
        case .approve:
            guard let key = row.updateKey else { return "" }
            return "; once approved, new versions signed by its update key \(shown(key)) are swapped in without asking you"
        case .update:
            var text = ""
            if row.updateKey != nil || row.formerUpdateKey != nil {
                text += "; the update key changes from \(shown(row.formerUpdateKey)) to \(shown(row.updateKey))"
                if row.updateKey != nil { text += ", and new versions it signs will then be swapped in without asking you" }
            }
            if let note = row.note { text += " (\(DisplayText.sanitized(note)))" }
            return text
        case .revoke, .limits, .time:
            return ""
        }
    }

    private static func asksTo(_ purpose: Guard.Purpose) -> String {
        switch purpose {
        case .approve: "be approved"
        case .revoke: "be revoked"
        case .update: "be updated"
        case .limits: "set time limits"
        case .time: "get more time"
        }
    }

    /// One request in a sentence, every text from the child escaped for a terminal.
    static func describe(_ row: Guard.Request) -> String {
        func shown(_ text: String) -> String { DisplayText.sanitized(text) }
        let purpose = switch row.purpose {
        case .approve: "to provide parental controls" + (row.to.map { " (\(shown($0)))" } ?? "")
        case .revoke: "to stop providing parental controls"
        case .update: "to be updated from \(shown(row.from ?? "?")) to \(shown(row.to ?? "?"))"
        case .limits: "to set the time limits \(shown(row.limits ?? "?"))"
        case .time: "\(row.minutes.map { "\($0) more minutes" } ?? "more time") today"
            + (row.reason.map { " (“\(shown($0))”)" } ?? "")
        }
        return "“\(shown(row.name))” (\(shown(row.app))) asks \(purpose) for \(shown(row.user)), at \(shown(row.path))"
            + updateKeyText(row)
    }
}

#if canImport(Glibc)
import Glibc
#endif
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
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let json = arguments.has("--json")
        guard arguments.has("--watch") else {
            let rows = (try connection.call("ListRequests")["requests"]?.arrayValue ?? []).compactMap(\.objectValue)
            print(json ? requestsJSON(rows) : requestsTable(rows))
            return
        }
        // Lines as things change, written at once, for a terminal or a pipe.
        var shown: [Int64: JSONObject] = [:]
        var first = true
        try connection.stream("WatchRequests") { reply in
            let rows = (reply["requests"]?.arrayValue ?? []).compactMap(\.objectValue)
            if json {
                writeToStandardOutput(requestsJSON(rows) + "\n")
                return
            }
            if first {
                writeToStandardOutput(requestsTable(rows) + "\n")
                first = false
                for row in rows { if let id = row["id"]?.intValue { shown[id] = row } }
                return
            }
            var now: [Int64: JSONObject] = [:]
            for row in rows { if let id = row["id"]?.intValue { now[id] = row } }
            for id in now.keys.sorted() where shown[id] == nil {
                let line = "new request \(id): \(describe(now[id] ?? [:])); decide with: familyctl approve \(id)   or: familyctl deny \(id)"
                writeToStandardOutput(line + "\n")
            }
            for id in shown.keys.sorted() where now[id] == nil {
                writeToStandardOutput("request \(id) ended\n")
            }
            shown = now
        }
    }

    /// `familyctl approve ID` and `familyctl deny ID [--stdin]`: PAM
    /// authenticates the caller on this terminal (root is not asked), then
    /// the Guard carries the decision out.
    static func decide(_ tokens: [String], approve: Bool, socket: String?) throws(CommandFailure) {
        let verb = approve ? "approve" : "deny"
        let arguments = try parse(tokens, flags: ["--stdin"])
        guard arguments.operands.count == 1, let text = arguments.operands.first else {
            throw CommandFailure(.usage, "\(verb) needs one request number (see familyctl requests)")
        }
        guard let id = Int64(text), id > 0 else {
            throw CommandFailure(.usage, "\(verb) expects a request number, found \"\(text.clipped)\"")
        }
        let conversation = try authenticationConversation(stdin: arguments.has("--stdin"))
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let reply = try connection.converse("DecideRequest", ["id": .int(id), "approve": .bool(approve)], through: conversation)
        guard let authorization = reply["authorization"]?.objectValue else {
            print("familyctl: request \(id) \(approve ? "approved: the app's approval is lifted" : "denied: the approval stays")")
            return
        }
        let app = DisplayText.sanitized(authorization["app"]?.stringValue ?? "?")
        let user = DisplayText.sanitized(authorization["user"]?.stringValue ?? "?")
        let status = authorization["status"]?.stringValue ?? "?"
        let lock = DisplayText.sanitized(authorization["lock"]?.stringValue ?? "?")
        print("familyctl: request \(id): \(app) for \(user) is now \(status) (lock: \(lock))")
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
    static func changeProtection(_ method: String, _ parameters: JSONObject, stdin: Bool,
                                 socket: String?) throws(CommandFailure) -> JSONObject {
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

    /// The documented `--json` form: `{"requests": [ … ]}`, one object per
    /// request with `id`, `user`, `app`, `name`, `path`, `purpose`, `created`
    /// and `expires` (ISO 8601, UTC).
    static func requestsJSON(_ rows: [JSONObject]) -> String {
        let items: [JSONValue] = rows.map { row in
            .object([
                "id": row["id"] ?? .null,
                "user": row["user"] ?? .null,
                "app": row["app"] ?? .null,
                "name": row["name"] ?? .null,
                "path": row["path"] ?? .null,
                "purpose": row["purpose"] ?? .null,
                "created": .string(isoDate(row["created"]?.doubleValue ?? 0)),
                "expires": .string(isoDate(row["expires"]?.doubleValue ?? 0)),
            ])
        }
        return JSONValue.object(["requests": .array(items)]).description
    }

    static func requestsTable(_ rows: [JSONObject]) -> String {
        guard !rows.isEmpty else { return "No requests are waiting for you." }
        let header = ["ID", "USER", "APP", "NAME", "ASKS TO", "ASKED", "EXPIRES", "PATH"]
        let table: [[String]] = rows.map { row in
            func text(_ key: String) -> String { row[key]?.stringValue ?? "" }
            return [String(row["id"]?.intValue ?? 0), text("user"), text("app"), text("name"),
                    text("purpose") == "revoke" ? "be revoked" : "be approved",
                    isoDate(row["created"]?.doubleValue ?? 0), isoDate(row["expires"]?.doubleValue ?? 0), text("path")]
        }
        return columns([header] + table)
    }

    private static func describe(_ row: JSONObject) -> String {
        func text(_ key: String) -> String { DisplayText.sanitized(row[key]?.stringValue ?? "?") }
        let purpose = row["purpose"]?.stringValue == "revoke" ? "to stop providing parental controls" : "to provide parental controls"
        return "“\(text("name"))” (\(text("app"))) asks \(purpose) for \(text("user")), at \(text("path"))"
    }
}

#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import Synchronization
import SystemKit
import Varlink

// `familyctl -H HOST1,HOST2,…` (or `-H @FILE`) with `requests [--watch]`,
// `status`, `log` or `monitors`: several machines at once, one thread each,
// so a machine out of reach never holds up the others.
extension FamilyCtl {
    /// Whole lines from every machine's thread, never interleaved.
    private static let output = Mutex(())

    /// The longest wait between two tries to reach a machine.
    static let longestRetryPause = Duration.seconds(60)

    /// Writes `text` (lines, each ending in a newline) at once, under the lock.
    static func emit(_ text: String, toStandardError: Bool = false) {
        output.withLock { _ in
            if toStandardError { writeToStandardError(text) } else { writeToStandardOutput(text) }
        }
    }

    /// Each line of `text` after `host`'s name, each ending in a newline.
    static func prefixed(_ text: String, by host: RemoteHost) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "\(host.shown): \($0)\n" }.joined()
    }

    /// One JSON object per line: `{"host": NAME, "requests": [ … ]}`.
    static func hostRequestsJSON(_ rows: [Guard.Request], host: RemoteHost) -> String {
        let name = String(decoding: JSONValue.string(host.name).serialized(), as: UTF8.self)
        return "{\"host\":" + name + "," + requestsJSON(rows).dropFirst() + "\n"
    }

    /// `{"KEY": [ … ]}`, `--json` for several machines: every machine's
    /// rows in one document, in the order named, each row first naming its
    /// machine as `"host"`, the rest as one machine's `--json` writes it.
    static func hostRowsJSON<Row: GuardMessage>(_ key: String, _ answers: [(host: RemoteHost, rows: [Row])]) -> String {
        let rows = answers.flatMap { host, rows in
            rows.map { row in
                let fields = row.object(floats: { .string(isoDate($0)) }).members.filter { $0.key != "host" }
                return JSONValue.object(JSONObject([(key: "host", value: .string(host.name))] + fields))
            }
        }
        return JSONValue.object([key: .array(rows)]).description + "\n"
    }

    /// Asks the Guard of every machine of `hosts` at once, one thread each,
    /// so a machine out of reach never holds up the others; then `show`s
    /// the answers of those that answered, in the order named (all at once,
    /// for one `--json` document). Each machine that could not be asked is
    /// named once on standard error.
    /// - Throws: when a machine could not be asked, with the status of the
    ///   first such failure, after the others' answers are shown.
    static func onEveryHost<Answer: Sendable>(
        _ hosts: [RemoteHost], ask: @escaping @Sendable (GuardConnection) throws(CommandFailure) -> Answer,
        show: ([(host: RemoteHost, answer: Answer)]) -> Void
    ) throws(CommandFailure) {
        let results = HostResults<Answer>()
        var threads: [SystemThread] = []
        for host in hosts {
            do throws(Errno) {
                threads.append(try SystemThread.spawn(name: "host") {
                    let result = Result { () throws(CommandFailure) in try ask(GuardConnection(host: host)) }
                    results.answers.withLock { $0[host] = result }
                })
            } catch {
                for thread in threads { thread.join() }
                throw CommandFailure(.failure, "cannot start a thread for \(host.shown): \(error)")
            }
        }
        for thread in threads { thread.join() }
        var answered: [(host: RemoteHost, answer: Answer)] = []
        var firstFailure: CommandFailure?
        for host in hosts {
            switch results.answers.withLock({ $0[host] }) {
            case .success(let answer):
                answered.append((host, answer))
            case .failure(let failure):
                emit("familyctl: \(failure.message)\n", toStandardError: true)
                firstFailure = firstFailure ?? failure
            case nil:
                break
            }
        }
        if !answered.isEmpty { show(answered) }
        if let firstFailure { throw CommandFailure(firstFailure.code, "not every machine answered") }
    }

    /// `requests` on every machine of `hosts`: each machine's list, in the
    /// order named (with `--json`, one object a line, see ``hostRequestsJSON(_:host:)``).
    static func requests(on hosts: [RemoteHost], json: Bool) throws(CommandFailure) {
        try onEveryHost(hosts, ask: { connection throws(CommandFailure) in
            try connection.call(Guard.ListRequests.self, .init()).requests
        }, show: { answers in
            for (host, rows) in answers {
                emit(json ? hostRequestsJSON(rows, host: host) : prefixed(requestsTable(rows), by: host))
            }
        })
    }

    /// `status` on every machine of `hosts`: each machine's table after its
    /// name, or with `--json` one document of them all (``hostRowsJSON(_:_:)``);
    /// root's warnings on standard error, after the machine's name.
    static func status(on hosts: [RemoteHost], user: String?, json: Bool) throws(CommandFailure) {
        try onEveryHost(hosts, ask: { connection throws(CommandFailure) in
            try connection.call(Guard.ListAuthorizations.self, .init(user: user))
        }, show: { answers in
            for (host, reply) in answers {
                if let warning = standingWarning(reply.warnings) { emit(prefixed(warning, by: host), toStandardError: true) }
            }
            emit(json ? hostRowsJSON("authorizations", answers.map { ($0.host, $0.answer.authorizations) })
                : answers.map { prefixed(statusText($0.answer.authorizations, user: user), by: $0.host) }.joined())
        })
    }

    /// `log` on every machine of `hosts`, asked the same of each: each
    /// machine's events after its name, or with `--json` one document.
    static func log(on hosts: [RemoteHost], _ parameters: Guard.ReadAudit.Parameters, json: Bool) throws(CommandFailure) {
        try onEveryHost(hosts, ask: { connection throws(CommandFailure) in
            try connection.call(Guard.ReadAudit.self, parameters).events
        }, show: { answers in
            emit(json ? hostRowsJSON("events", answers.map { ($0.host, $0.answer) })
                : answers.map { prefixed(logText($0.answer, user: parameters.user), by: $0.host) }.joined())
        })
    }

    /// `monitors` on every machine of `hosts`: each machine's lines after
    /// its name, or with `--json` one document.
    static func monitors(on hosts: [RemoteHost], json: Bool) throws(CommandFailure) {
        try onEveryHost(hosts, ask: { connection throws(CommandFailure) in
            try connection.call(Guard.ListMonitors.self, .init()).monitors
        }, show: { answers in
            emit(json ? hostRowsJSON("monitors", answers.map { ($0.host, $0.answer) })
                : answers.map { prefixed(monitorsList($0.answer), by: $0.host) }.joined())
        })
    }

    /// `requests --watch` on every machine of `hosts`, until interrupted. A
    /// machine that cannot be reached, or drops, is named once on standard
    /// error and tried again, each pause twice the last (up to a minute);
    /// when it answers again that is said once too.
    static func watchRequests(on hosts: [RemoteHost], json: Bool) throws(CommandFailure) {
        var threads: [SystemThread] = []
        for host in hosts {
            do throws(Errno) {
                threads.append(try SystemThread.spawn(name: "watch") { watch(host, json: json) })
            } catch {
                throw CommandFailure(.failure, "cannot start a thread for \(host.shown): \(error)")
            }
        }
        for thread in threads { thread.join() }
    }

    private static func watch(_ host: RemoteHost, json: Bool) {
        var printer = RequestsWatchPrinter(json: json, command: "familyctl -H \(host.shown)")
        var pause = Duration.seconds(1)
        var down = false
        while true {
            var reason: String
            do throws(CommandFailure) {
                let connection = try GuardConnection(host: host)
                try connection.stream(Guard.WatchRequests.self, .init()) { reply in
                    if down {
                        emit("familyctl: \(host.shown) answers again\n", toStandardError: true)
                        down = false
                    }
                    pause = .seconds(1)
                    if json { return emit(hostRequestsJSON(reply.requests, host: host)) }
                    let text = printer.text(for: reply.requests)
                    if !text.isEmpty { emit(prefixed(text, by: host)) }
                }
                reason = "the Guard on \(host.shown) ended the watch"
            } catch {
                reason = error.message
            }
            if !down {
                emit("familyctl: \(reason); trying again in the background\n", toStandardError: true)
                down = true
            }
            SystemThread.sleep(for: pause)
            pause = min(pause * 2, longestRetryPause)
        }
    }
}

/// What each machine's thread found, shared with the thread that prints.
private final class HostResults<Answer: Sendable>: Sendable {
    let answers = Mutex<[RemoteHost: Result<Answer, CommandFailure>]>([:])
}

/// What `requests --watch` prints for each list the Guard sends: the table
/// first, then a line for each request that comes or ends.
struct RequestsWatchPrinter {
    let json: Bool
    /// How a line tells the guardian to decide: `familyctl`, or with `-H HOST`.
    let command: String
    private var shown: [Int64: Guard.Request] = [:]
    private var first = true

    init(json: Bool, command: String = "familyctl") {
        self.json = json
        self.command = command
    }

    /// The text for `rows`, the requests waiting now, without a final newline
    /// (empty when nothing changed since the last list).
    mutating func text(for rows: [Guard.Request]) -> String {
        if json { return FamilyCtl.requestsJSON(rows) }
        var now: [Int64: Guard.Request] = [:]
        for row in rows { now[row.id] = row }
        defer { shown = now }
        if first {
            first = false
            return FamilyCtl.requestsTable(rows)
        }
        var lines: [String] = []
        for (id, row) in now.sorted(by: { $0.key < $1.key }) where shown[id] == nil {
            lines.append("new request \(id): \(FamilyCtl.describe(row)); decide with: \(command) approve \(id)   or: \(command) deny \(id)")
        }
        for id in shown.keys.sorted() where now[id] == nil {
            lines.append("request \(id) ended")
        }
        return lines.joined(separator: "\n")
    }
}

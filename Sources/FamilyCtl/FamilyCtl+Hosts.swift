#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import Synchronization
import SystemKit
import Varlink

// `familyctl -H HOST1,HOST2,… requests [--watch]`: several machines at once,
// one thread each, so a machine out of reach never holds up the others.
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

    /// `requests` on every machine of `hosts`: each machine's list, in the
    /// order named; a machine that could not be asked is named on standard
    /// error and the command ends with the status of the first such failure.
    static func requests(on hosts: [RemoteHost], json: Bool) throws(CommandFailure) {
        let results = HostResults()
        var threads: [SystemThread] = []
        for host in hosts {
            do throws(Errno) {
                threads.append(try SystemThread.spawn(name: "host") {
                    let result = Result { () throws(CommandFailure) in
                        try GuardConnection(host: host).call(Guard.ListRequests.self, .init()).requests
                    }
                    results.answers.withLock { $0[host] = result }
                })
            } catch {
                throw CommandFailure(.failure, "cannot start a thread for \(host.shown): \(error)")
            }
        }
        for thread in threads { thread.join() }
        var firstFailure: CommandFailure?
        for host in hosts {
            switch results.answers.withLock({ $0[host] }) {
            case .success(let rows):
                emit(json ? hostRequestsJSON(rows, host: host) : prefixed(requestsTable(rows), by: host))
            case .failure(let failure):
                emit("familyctl: \(failure.message)\n", toStandardError: true)
                firstFailure = firstFailure ?? failure
            case nil:
                break
            }
        }
        if let firstFailure { throw CommandFailure(firstFailure.code, "not every machine answered") }
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

/// What each machine's thread of `requests` found, shared with the thread that prints.
private final class HostResults: Sendable {
    let answers = Mutex<[RemoteHost: Result<[Guard.Request], CommandFailure>]>([:])
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

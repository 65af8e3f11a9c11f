#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import Synchronization
import SystemKit
import Varlink

/// `familyctl agent` with a notification server: the guardian's requests,
/// as the Guard's `WatchRequests` stream tells them, become desktop
/// notifications with "Approve" and "Deny"; choosing one decides the
/// request over the agent's own connection to the Guard, the password asked
/// by pinentry in the guardian's own session. A request that ends
/// elsewhere (decided by another guardian, expired, withdrawn by its app)
/// has its notification withdrawn. A child's monitor that keeps ending
/// (`WatchMonitorAlerts`, on a connection of its own) becomes a notification
/// without actions; an older Guard without monitors leaves requests only.
///
/// Four threads: this one owns the bus (sd-bus is not thread-safe); the
/// watches read the Guard's two streams; each decision runs on a thread of its own
/// (a person answers pinentry there). The others hand what they learn to
/// this one through ``Mailbox``.
final class NotificationAgent {
    /// What the other threads tell the bus thread.
    enum Message: Sendable {
        case requests([Guard.Request])
        case alert(Guard.MonitorAlert)
        case watchEnded(CommandFailure)
        case decided(request: Int64, outcome: String, decided: Bool)
    }

    /// Messages for the bus thread, and an eventfd that wakes it.
    final class Mailbox: Sendable {
        private let queue = Mutex<[Message]>([])
        let wakeup: EventCounter

        init() throws(Errno) { wakeup = try EventCounter() }

        func post(_ message: Message) {
            queue.withLock { $0.append(message) }
            wakeup.signal()
        }

        func take() -> [Message] {
            wakeup.drain()
            return queue.withLock { queue in
                defer { queue = [] }
                return queue
            }
        }
    }

    private let notifier: any NotificationServer
    private let socket: String
    private let mailbox: Mailbox
    /// Request id to the notification showing it.
    private var posted: [Int64: UInt32] = [:]
    private var requests: [Int64: Guard.Request] = [:]
    /// Requests whose notification the guardian dismissed: not shown again.
    private var dismissed: Set<Int64> = []
    private var deciding: Set<Int64> = []
    private var firstList = true

    init(notifier: any NotificationServer, socket: String) throws(CommandFailure) {
        self.notifier = notifier
        self.socket = socket
        do throws(Errno) {
            mailbox = try Mailbox()
        } catch {
            throw CommandFailure(.failure, "cannot make an eventfd: \(error)")
        }
    }

    /// Runs until the Guard or the session bus goes away.
    func run() throws(CommandFailure) {
        let connection = try GuardConnection(socket: socket)
        let mailbox = mailbox
        do throws(Errno) {
            try SystemThread.spawn(name: "agent-watch") {
                do throws(CommandFailure) {
                    try connection.stream(Guard.WatchRequests.self, .init()) { reply in
                        mailbox.post(.requests(reply.requests))
                    }
                    mailbox.post(.watchEnded(CommandFailure(.unavailable, "the Guard ended the watch")))
                } catch {
                    mailbox.post(.watchEnded(error))
                }
            }.detach()
        } catch {
            throw CommandFailure(.failure, "cannot start the watch: \(error)")
        }
        try Self.watchAlerts(socket: socket) { [mailbox] alert in mailbox.post(.alert(alert)) } ended: { [mailbox] failure in
            mailbox.post(.watchEnded(failure))
        }
        while true {
            do throws(Errno) {
                try notifier.wait(alsoFor: mailbox.wakeup.rawValue, timeout: nil)
            } catch {
                throw CommandFailure(.unavailable, "the session bus went away: \(error)")
            }
            while let event = notifier.nextEvent() { handle(event) }
            for message in mailbox.take() {
                switch message {
                case .requests(let rows): show(rows)
                case .alert(let alert): show(alert)
                case .watchEnded(let failure): throw failure
                case .decided(let request, let outcome, let decided): finished(request, outcome: outcome, decided: decided)
                }
            }
        }
    }

    /// New requests posted, ended ones withdrawn.
    private func show(_ rows: [Guard.Request]) {
        if firstList {
            writeToStandardOutput("familyctl: watching your requests; notifications through "
                + "org.freedesktop.Notifications (\(DisplayText.sanitized(notifier.owner)))\n")
        }
        var now: [Int64: Guard.Request] = [:]
        for row in rows { now[row.id] = row }
        for (id, row) in now.sorted(by: { $0.key < $1.key }) where posted[id] == nil && !dismissed.contains(id) {
            do throws(Errno) {
                posted[id] = try notifier.notify(summary: "FamilyControls request \(id)", body: Self.body(row),
                                                 decidable: true)
                writeToStandardOutput("new request \(id): \(FamilyCtl.describe(row)) (notified)\n")
            } catch {
                writeToStandardError("familyctl: cannot post the notification of request \(id): \(error)\n")
            }
        }
        for id in requests.keys.sorted() where now[id] == nil {
            if let notification = posted.removeValue(forKey: id) { try? notifier.close(notification) }
            dismissed.remove(id)
            writeToStandardOutput("request \(id) ended\n")
        }
        requests = now
        firstList = false
    }

    /// A monitor that keeps ending: a notification with no action, and a line.
    private func show(_ alert: Guard.MonitorAlert) {
        do throws(Errno) {
            _ = try notifier.notify(summary: Self.alertSummary, body: Self.body(alert), decidable: false)
            writeToStandardOutput("monitor alert: \(FamilyCtl.describe(alert)) (notified)\n")
        } catch {
            writeToStandardError("familyctl: cannot post the notification of a monitor alert: \(error)\n")
            writeToStandardOutput("monitor alert: \(FamilyCtl.describe(alert))\n")
        }
    }

    /// The summary of a monitor alert's notification.
    static let alertSummary = "A monitor keeps ending"

    /// A monitor alert's notification body: the alert as the terminal shows
    /// it, escaped as a request's is.
    static func body(_ alert: Guard.MonitorAlert) -> String {
        let line = FamilyCtl.describe(alert)
        return markupEscaped(line.prefix(1).uppercased() + line.dropFirst() + ".")
    }

    /// Follows `WatchMonitorAlerts` on a connection and a thread of its own,
    /// handing each alert to `each`. An older Guard, without the method,
    /// ends nothing: the agent carries on with requests only. Any other
    /// ending is handed to `ended`.
    static func watchAlerts(socket: String, _ each: @escaping @Sendable (Guard.MonitorAlert) -> Void,
                            ended: @escaping @Sendable (CommandFailure) -> Void) throws(CommandFailure) {
        do throws(Errno) {
            try SystemThread.spawn(name: "agent-alerts") {
                do throws(CommandFailure) {
                    let connection = try GuardConnection(socket: socket)
                    try connection.stream(Guard.WatchMonitorAlerts.self, .init()) { reply in
                        if let alert = reply.alert { each(alert) }
                    }
                    ended(CommandFailure(.unavailable, "the Guard ended the watch of monitor alerts"))
                } catch {
                    if error.remoteError == VarlinkError.Name.methodNotFound { return }
                    ended(error)
                }
            }.detach()
        } catch {
            throw CommandFailure(.failure, "cannot start the watch of monitor alerts: \(error)")
        }
    }

    private func handle(_ event: NotificationEvent) {
        switch event {
        case .closed(let notification):
            // Dismissed by the guardian (or closed after an action): not shown again.
            guard let (id, _) = posted.first(where: { $0.value == notification }) else { return }
            posted[id] = nil
            dismissed.insert(id)
        case .action(let notification, let action):
            guard action == "approve" || action == "deny",
                  let (id, _) = posted.first(where: { $0.value == notification }),
                  let row = requests[id], !deciding.contains(id) else { return }
            decide(row, approve: action == "approve")
        }
    }

    /// Decides `row` on a thread of its own: pinentry waits for a person.
    private func decide(_ row: Guard.Request, approve: Bool) {
        deciding.insert(row.id)
        let environment = Self.environment()
        let socket = socket
        let mailbox = mailbox
        let id = row.id
        let description = "\(approve ? "Approve" : "Deny") request \(id): \(FamilyCtl.describe(row)).\n"
            + "Enter your own password to \(approve ? "approve" : "deny") it."
        do throws(Errno) {
            try SystemThread.spawn(name: "agent-decide") {
                let (outcome, decided) = NotificationAgent.decision(
                    id, approve: approve, name: row.name, description: description, environment: environment, socket: socket)
                mailbox.post(.decided(request: id, outcome: outcome, decided: decided))
            }.detach()
        } catch {
            deciding.remove(id)
            writeToStandardError("familyctl: cannot decide request \(id): \(error)\n")
        }
    }

    /// What `familyctl approve ID` or `deny ID` would do, with pinentry for the terminal.
    private static func decision(_ id: Int64, approve: Bool, name: String, description: String, environment: [String],
                                 socket: String) -> (outcome: String, decided: Bool) {
        var variables: [String: String] = [:]
        for entry in environment {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            variables[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        guard let program = Pinentry.program(environment: variables) else {
            return ("request \(id) was not decided: no pinentry program (install pinentry, or set PINENTRY)", false)
        }
        let conversation = PinentryConversation(program: program, environment: environment,
                                                title: "FamilyControls", description: description)
        defer { conversation.finish() }
        do throws(CommandFailure) {
            let connection = try GuardConnection(socket: socket)
            let reply = try connection.converse(Guard.DecideRequest.self, .init(id: id, approve: approve),
                                                through: conversation)
            guard let authorization = reply.authorization else {
                return ("request \(id) \(approve ? "approved: the app's approval is lifted" : "denied: the approval stays")", true)
            }
            return ("request \(id): \(FamilyCtl.outcomeText(authorization, name: name))", true)
        } catch {
            return ("request \(id) was not decided: \(error.message)", false)
        }
    }

    private func finished(_ id: Int64, outcome: String, decided: Bool) {
        deciding.remove(id)
        writeToStandardOutput(outcome + "\n")
        _ = try? notifier.notify(summary: "FamilyControls request \(id)", body: Self.markupEscaped(outcome), decidable: false)
        // Not decided (canceled, a wrong password): the request still waits, so its
        // notification comes back, the server having closed it on the click.
        if !decided, let row = requests[id], posted[id] == nil {
            dismissed.remove(id)
            posted[id] = try? notifier.notify(summary: "FamilyControls request \(id)", body: Self.body(row), decidable: true)
        }
    }

    /// The notification's body: the request as the terminal shows it, then
    /// escaped for the markup a server may read in a body.
    static func body(_ row: Guard.Request) -> String {
        markupEscaped(FamilyCtl.describe(row) + ".") + "\nApprove or Deny: your own password is asked in this session."
    }

    /// `text` safe in a notification's body (``DisplayText/markupEscaped(_:)``).
    static func markupEscaped(_ text: String) -> String { DisplayText.markupEscaped(text) }

    /// The agent's environment, `NAME=value`, for pinentry: the guardian's session.
    static func environment() -> [String] {
        var entries: [String] = []
        var pointer = environ
        while let entry = pointer.pointee {
            entries.append(String(cString: entry))
            pointer += 1
        }
        return entries
    }
}

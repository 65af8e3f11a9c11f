import GuardProtocol
import SystemKit
import Varlink

extension FamilyCtl {
    /// `familyctl monitors [--json]`: the monitors the Guard runs in the
    /// children's sessions (`ListMonitors`), one line each.
    static func monitors(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, flags: ["--json"])
        guard arguments.operands.isEmpty else { throw CommandFailure(.usage, "monitors takes no operands") }
        if GuardConnection.remoteHosts.count > 1 {
            return try monitors(on: GuardConnection.remoteHosts, json: arguments.has("--json"))
        }
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let rows = try connection.call(Guard.ListMonitors.self, .init()).monitors
        print(arguments.has("--json") ? monitorsJSON(rows) : monitorsList(rows))
    }

    /// The documented `--json` form: the `ListMonitors` reply as the
    /// interface types it, `{"monitors": [ … ]}`, its times (`startedAt`,
    /// `restartAt`) written as ISO 8601 in UTC as every other form's are.
    static func monitorsJSON(_ rows: [Guard.Monitor]) -> String {
        Guard.ListMonitors.Reply(monitors: rows).json(floats: isoDate)
    }

    static func monitorsList(_ rows: [Guard.Monitor]) -> String {
        guard !rows.isEmpty else { return "No monitors are running that you may see." }
        return rows.map(describe).joined(separator: "\n")
    }

    /// One monitor, as a line: `APP for CHILD in session S: running as pid
    /// P since TIME, restarted N times`; every name made safe to show.
    static func describe(_ row: Guard.Monitor) -> String {
        let ended = row.ended.map { DisplayText.sanitized($0) }
        let state: String
        switch row.state {
        case .running:
            state = "running as pid \(row.pid) since \(localDate(row.startedAt))"
        case .waiting:
            state = "waiting, starts again" + (row.restartAt.map { " at \(localDate($0))" } ?? " soon")
                + (ended.map { " after \($0)" } ?? "")
        case .stopped:
            state = "stopped" + (ended.map { " after \($0)" } ?? "")
        }
        return "\(DisplayText.sanitized(row.appID)) for \(DisplayText.sanitized(row.user)) in session "
            + "\(DisplayText.sanitized(row.session)): \(state), restarted \(times(row.restarts))"
    }

    /// A monitor that keeps ending, as a line in a parent's words (the
    /// app's name, the child's, what happened, what happens next; the app
    /// ID, the session and the exit status are in `familyctl monitors`):
    /// what the agent prints and, escaped, what its notification says.
    static func describe(_ alert: Guard.MonitorAlert) -> String {
        let minutes = max(1, (alert.windowSeconds + 59) / 60)
        let child = DisplayText.sanitized(alert.user)
        var next = alert.waitingSeconds.map { "FamilyControls starts it again in \(duration($0))" }
            ?? "FamilyControls starts it again at once"
        switch alert.consequence {
        case .lock?: next = "it is required, so \(child)'s sessions were locked"
        case .end?: next = "it is required, so \(child)'s sessions were ended"
        case nil: break
        }
        return "the monitor of “\(DisplayText.sanitized(alert.appName))” for \(child) keeps stopping: "
            + "\(times(alert.restarts)) in \(minutes) minute\(minutes == 1 ? "" : "s"), the last time \(endedInWords(alert.ended)); "
            + "\(next) (familyctl monitors says more)"
    }

    /// How a monitor ended, as the Guard says it (`signal 9`, `exit status
    /// 1`, `stopped by signal 19`), in words.
    static func endedInWords(_ ended: String) -> String {
        if ended.hasPrefix("signal ") || ended.hasPrefix("ended by signal ") { return "it was killed" }
        if ended.hasPrefix("exit status ") || ended.hasPrefix("ended by exit status ") { return "it quit" }
        if ended.hasPrefix("stopped by signal ") { return "it was paused" }
        if ended.hasPrefix("was not the approved app") { return "what ran was not the approved app" }
        return "it ended: " + DisplayText.sanitized(ended)
    }

    private static func times(_ count: Int64) -> String { count == 1 ? "1 time" : "\(count) times" }

    private static func duration(_ seconds: Int64) -> String {
        seconds < 120 ? "\(seconds) second\(seconds == 1 ? "" : "s")" : "\((seconds + 59) / 60) minutes"
    }
}

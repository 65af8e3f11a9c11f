import GuardProtocol
import SystemKit
import TimeLimits

// A child's time limits: the settings approved apps keep, and more time.
extension FamilyCtl {
    /// `familyctl limits [--user USER] [--json]`, `limits set`, `limits clear`, `limits more`.
    static func limits(_ tokens: [String], socket: String?) throws(CommandFailure) {
        switch tokens.first {
        case "set": try setLimits(Array(tokens.dropFirst()), socket: socket)
        case "clear": try clearLimits(Array(tokens.dropFirst()), socket: socket)
        case "more": try moreTime(Array(tokens.dropFirst()), socket: socket)
        default:
            let arguments = try parse(tokens, valued: ["--user"], flags: ["--json"])
            guard arguments.operands.isEmpty else {
                throw CommandFailure(.usage, "limits takes set, clear or more, or no operand (found \"\(arguments.operands[0].clipped)\")")
            }
            let children = try GuardConnection(socket: GuardConnection.socketPath(socket))
                .call(Guard.ListTimeLimits.self, .init(user: arguments["--user"])).children
            print(arguments.has("--json") ? limitsJSON(children) : limitsText(children))
        }
    }

    /// The documented `--json` form: the `ListTimeLimits` reply as the
    /// interface types it, `{"children": [ … ]}`: per child `user`, `uid`,
    /// `apps` (each `app`, `name`, `hours`, `daily` in seconds, `atEnd`,
    /// `setBy`, `setAt`), the limits in force (`hours`, `daily`, `atEnd`),
    /// `day`, `used`, `extra` and `left` in seconds (`used` and `left` null
    /// while nothing counts session time), `openUntil`, `allowedNow` and
    /// `nextAllowed`; times ISO 8601, UTC.
    static func limitsJSON(_ children: [Guard.ChildLimits]) -> String {
        Guard.ListTimeLimits.Reply(children: children).json(floats: isoDate)
    }

    static func limitsText(_ children: [Guard.ChildLimits]) -> String {
        guard !children.isEmpty else { return "No time limits are in force." }
        func time(_ seconds: Int64?) -> String { seconds.map { SessionDuration(seconds: Int($0)).description } ?? "-" }
        let header = ["USER", "HOURS", "DAILY", "AT END", "USED TODAY", "MORE", "LEFT", "NOW"]
        let rows: [[String]] = children.map { child in
            var now = child.allowedNow ? "may log in" : "refused, next " + (child.nextAllowed ?? "?")
            if let open = child.openUntil { now += ", open until \(localDate(open))" }
            return [child.user, child.hours ?? "any", time(child.daily), child.atEnd.rawValue,
                    child.used.map { time($0) } ?? "not counted", time(child.extra), time(child.left), now]
        }
        let apps = children.flatMap { child in
            child.apps.map { app in
                "\(child.user): “\(app.name ?? app.app)” (\(app.app)) set " + [app.hours.map { "hours \($0)" },
                    app.daily.map { "\(time($0)) a day" }, "then \(app.atEnd.rawValue)"].compactMap { $0 }.joined(separator: ", ")
                    + "; by \(app.setBy), \(localDate(app.setAt))"
            }
        }
        return columns([header] + rows) + "\n" + apps.map { DisplayText.sanitized($0) }.joined(separator: "\n")
    }

    /// `familyctl limits set --user USER --app APP [--hours WINDOWS] [--daily DURATION] [--at-end lock|end]`
    static func setLimits(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--app", "--hours", "--daily", "--at-end"], flags: ["--stdin"])
        guard let user = arguments["--user"], let app = arguments["--app"], arguments.operands.isEmpty else {
            throw CommandFailure(.usage, "limits set needs --user USER and --app APP")
        }
        let hours = arguments["--hours"], daily = arguments["--daily"]
        guard hours != nil || daily != nil || arguments["--at-end"] != nil else {
            throw CommandFailure(.usage, "limits set needs --hours WINDOWS, --daily DURATION or --at-end lock|end")
        }
        // Checked here too, so a typing error is told before any password is asked.
        do throws(TimeLimitsError) {
            if let hours, hours != "unlimited" { _ = try LoginHours(parsing: hours) }
            if let daily, daily != "unlimited" { _ = try SessionDuration(parsing: daily) }
        } catch {
            throw CommandFailure(.usage, error.description)
        }
        let atEnd = try arguments["--at-end"].map { text throws(CommandFailure) -> Guard.TimeUpAction in
            guard let action = Guard.TimeUpAction(rawValue: text) else {
                throw CommandFailure(.usage, "--at-end is lock or end, not \"\(text.clipped)\"")
            }
            return action
        }
        let reply = try changeProtection(Guard.SetChildLimits.self,
                                         .init(user: user, app: app, hours: hours, daily: daily, atEnd: atEnd),
                                         stdin: arguments.has("--stdin"), socket: socket)
        print("familyctl: " + limitsSummary(reply.limits, user: user))
    }

    /// `familyctl limits clear --user USER --app APP`
    static func clearLimits(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--app"], flags: ["--stdin"])
        guard let user = arguments["--user"], let app = arguments["--app"], arguments.operands.isEmpty else {
            throw CommandFailure(.usage, "limits clear needs --user USER and --app APP")
        }
        let reply = try changeProtection(Guard.ClearChildLimits.self, .init(user: user, app: app),
                                         stdin: arguments.has("--stdin"), socket: socket)
        print("familyctl: cleared the time limits of \(DisplayText.sanitized(app)); " + limitsSummary(reply.limits, user: user))
    }

    /// `familyctl limits more --user USER --minutes N`
    static func moreTime(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--minutes"], flags: ["--stdin"])
        guard let user = arguments["--user"], let text = arguments["--minutes"], arguments.operands.isEmpty else {
            throw CommandFailure(.usage, "limits more needs --user USER and --minutes N")
        }
        let reply = try changeProtection(Guard.GrantMoreTime.self, .init(user: user, minutes: try minutes(text)),
                                         stdin: arguments.has("--stdin"), socket: socket)
        print("familyctl: gave \(DisplayText.sanitized(user)) \(text) more minutes today; " + limitsSummary(reply.limits, user: user))
    }

    /// A number of minutes as typed: a whole number from 1 to 1440.
    static func minutes(_ text: String) throws(CommandFailure) -> Int64 {
        guard let minutes = Int64(text), (1...1440).contains(minutes) else {
            throw CommandFailure(.usage, "--minutes takes a whole number of minutes from 1 to 1440, not \"\(text.clipped)\"")
        }
        return minutes
    }

    /// A child's limits in force in a sentence.
    static func limitsSummary(_ child: Guard.ChildLimits?, user: String) -> String {
        guard let child else { return "\(DisplayText.sanitized(user)) has no time limits in force" }
        var parts: [String] = []
        if let hours = child.hours { parts.append("hours \(hours)") }
        if let daily = child.daily { parts.append("\(SessionDuration(seconds: Int(daily)).description) a day") }
        if child.extra > 0 { parts.append("\(SessionDuration(seconds: Int(child.extra)).description) more today") }
        parts.append("then \(child.atEnd == .end ? "the sessions end" : "the screen locks")")
        return DisplayText.sanitized("\(child.user)'s time limits in force: " + parts.joined(separator: ", "))
    }
}

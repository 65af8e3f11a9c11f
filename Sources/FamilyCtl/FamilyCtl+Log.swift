#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit
import Varlink

// The audit trail, read the way `journalctl` and `last` are read.
extension FamilyCtl {
    /// `familyctl log [--user USER] [--app APP] [--since TIME] [--limit N] [--json]`
    static func log(_ tokens: [String], socket: String?) throws(CommandFailure) {
        let arguments = try parse(tokens, valued: ["--user", "--app", "--since", "--limit"], flags: ["--json"])
        guard arguments.operands.isEmpty else {
            throw CommandFailure(.usage, "log takes no operands; use --user USER or --app APP")
        }
        var parameters = Guard.ReadAudit.Parameters(user: arguments["--user"], app: arguments["--app"])
        if let since = arguments["--since"] {
            guard let seconds = parseTime(since, now: UnixTime.now.seconds) else {
                throw CommandFailure(.usage, "--since expects a date (2026-11-30), a date and time (\"2026-11-30 08:00\"), "
                    + "today, yesterday, or an age such as 90min, 12h or 7d; found \"\(since.clipped)\"")
            }
            parameters.since = seconds
        }
        if let text = arguments["--limit"] {
            guard let limit = Int64(text), (1...2000).contains(limit) else {
                throw CommandFailure(.usage, "--limit expects a whole number from 1 to 2000, found \"\(text.clipped)\"")
            }
            parameters.limit = limit
        }
        if GuardConnection.remoteHosts.count > 1 {
            return try log(on: GuardConnection.remoteHosts, parameters, json: arguments.has("--json"))
        }
        let connection = try GuardConnection(socket: GuardConnection.socketPath(socket))
        let events = try connection.call(Guard.ReadAudit.self, parameters).events
        print(arguments.has("--json") ? logJSON(events) : logText(events, user: arguments["--user"]))
    }

    /// What `log` prints for `events`, asked with `--user user`: the table,
    /// or why there is nothing to show.
    static func logText(_ events: [Guard.AuditEvent], user: String?) -> String {
        guard events.isEmpty else { return logTable(events) }
        return geteuid() == 0 || user != nil
            ? "No audit events."
            : "No audit events you may read: familyctl log shows the events about your children (everyone's, for root)."
    }

    /// The documented `--json` form: the `ReadAudit` reply as the interface
    /// types it, `{"events": [ … ]}`, each with `id`, `at` (ISO 8601, UTC),
    /// `actor`, `action`, `user`, `app`, `member`, `outcome` and `detail`
    /// (null when absent), `count` (how many times it happened) and `lastAt`
    /// (when it last did, ISO 8601; null for once).
    static func logJSON(_ events: [Guard.AuditEvent]) -> String {
        Guard.ReadAudit.Reply(events: events).json(floats: isoDate)
    }

    /// An identifier as words: `noEffect` → `no effect`.
    static func words(_ identifier: String) -> String {
        var text = ""
        for character in identifier {
            if character.isUppercase {
                text += " " + character.lowercased()
            } else {
                text.append(character)
            }
        }
        return text
    }

    static func logTable(_ events: [Guard.AuditEvent]) -> String {
        let header = ["TIME", "ACTOR", "ACTION", "USER", "APP", "OUTCOME", "DETAIL"]
        let rows: [[String]] = events.map { event in
            var detail = event.detail ?? ""
            if event.count > 1 {
                let last = event.lastAt.map { ", the last at " + UnixTime(seconds: $0).localDescription } ?? ""
                detail += (detail.isEmpty ? "" : " ") + "(repeated \(event.count) times\(last))"
            }
            return [UnixTime(seconds: event.at).localDescription, event.actor, event.action.rawValue, event.user, event.app ?? "-",
                    words(event.outcome.rawValue), detail]
        }
        return columns([header] + rows)
    }

    /// `--since` as Unix seconds: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` (or
    /// with a `T`) in local time, `today`, `yesterday`, or an age (`90min`,
    /// `12h`, `7d`, `2w`, `30s`) before `now`. Nil for anything else.
    static func parseTime(_ text: String, now: Double) -> Double? {
        let text = text.trimmingWhitespace().lowercased()
        if text == "today" || text == "yesterday" {
            var time = time_t(now)
            var parts = tm()
            localtime_r(&time, &parts)
            parts.tm_hour = 0
            parts.tm_min = 0
            parts.tm_sec = 0
            if text == "yesterday" { parts.tm_mday -= 1 }
            parts.tm_isdst = -1
            return Double(mktime(&parts))
        }
        let digits = text.prefix(while: { $0.isASCII && $0.isNumber })
        let units: [String: Double] = ["s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if !digits.isEmpty, digits.count <= 6, let number = Double(digits), let unit = units[String(text.dropFirst(digits.count))] {
            return now - number * unit
        }
        // A date, then perhaps a time.
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "t" }).map(String.init)
        guard (1...2).contains(fields.count) else { return nil }
        let date = fields[0].split(separator: "-", omittingEmptySubsequences: false).map { Int32($0) }
        guard date.count == 3, let year = date[0], let month = date[1], let day = date[2],
              (1970...9999).contains(year), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour: Int32 = 0, minute: Int32 = 0, second: Int32 = 0
        if fields.count == 2 {
            let clock = fields[1].split(separator: ":", omittingEmptySubsequences: false).map { Int32($0) }
            guard (2...3).contains(clock.count), let h = clock[0], let m = clock[1], (0...23).contains(h), (0...59).contains(m)
            else { return nil }
            hour = h
            minute = m
            if clock.count == 3 {
                guard let s = clock[2], (0...60).contains(s) else { return nil }
                second = s
            }
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        // mktime normalises 2026-02-31 into March: such a date does not exist.
        guard seconds != -1, parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Double(seconds)
    }
}

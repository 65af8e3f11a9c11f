import SystemKit

/// An audit event as the system log carries it: one line of `key=value`
/// fields in a fixed order, so a central log server's filters (rsyslog's
/// property-based filters, a SIEM's parser, fail2ban) never need to change,
/// and the same fields as journal fields of their own (`FAMILYCONTROLS_*`).
///
/// `familycontrols: host=lab-12 id=42 action=approve outcome=approved user=alice app=org.example.Filter member=child by=mum request=7 detail="request 7"`
///
/// `id=` is the audit row's number (`familyctl log`), `request=` the pending
/// request's (`familyctl approve 7`).
///
/// A value with a space, `"`, `\` or `=` is quoted, `"` and `\` escaped;
/// control characters are escaped as every displayed text is. A missing
/// value is `-`. `detail=` comes last, only when there is one. Never a secret:
/// an audit event holds none.
package struct AuditLine: Sendable {
    /// `MESSAGE_ID=` of every audit entry in the journal (`journalctl MESSAGE_ID=…`).
    static let messageID = "7f3a5c0e9b1d4e2a8c6f0b4d2e1a9c73"

    let fields: [(key: String, value: String)]

    package init(_ event: AuditEvent, id: Int64?, host: String) {
        var fields: [(key: String, value: String)] = [
            ("host", host), ("id", id.map(String.init) ?? "-"), ("action", "\(event.action)"), ("outcome", "\(event.outcome)"),
            ("user", event.user), ("app", event.appID ?? "-"), ("member", event.member.map { "\($0)" } ?? "-"), ("by", event.actor),
            ("request", event.requestID.map(String.init) ?? "-"),
        ]
        if let detail = event.detail { fields.append(("detail", detail)) }
        self.fields = fields
    }

    /// The line, prefixed `familycontrols:`.
    package var text: String {
        "familycontrols: " + fields.map { "\($0.key)=\(Self.quoted($0.value))" }.joined(separator: " ")
    }

    /// The journal entry: the line as `MESSAGE=`, `MESSAGE_ID=`, the
    /// priority, syslog's facility and identifier, and each field as `FAMILYCONTROLS_KEY=`.
    package func journalFields(priority: SecurityLog.Priority) -> [String] {
        ["MESSAGE=\(text)", "MESSAGE_ID=\(Self.messageID)", "PRIORITY=\(priority.rawValue)", "SYSLOG_FACILITY=10",
         "SYSLOG_IDENTIFIER=familycontrolsd"]
            + fields.map { "FAMILYCONTROLS_\($0.key.uppercased())=\(DisplayText.sanitized($0.value))" }
    }

    static func quoted(_ value: String) -> String {
        let shown = DisplayText.sanitized(value)
        guard shown.isEmpty || shown.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "=" }) else { return shown }
        var escaped = "\""
        for character in shown {
            if character == "\"" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "\""
    }
}

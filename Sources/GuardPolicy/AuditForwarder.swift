internal import CSDJournal
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardStore

/// Sends each audit event to the machine's log as well as the store, so
/// the forwarder a site already runs (systemd-journal-upload, rsyslog's
/// omfwd) carries it to one place: to the journal as a structured entry
/// where journald listens, else to syslog's `authpriv` (where sudo and sshd
/// report too), as one ``AuditLine``.
enum AuditForwarder {
    /// This machine's name, read once.
    static let host: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "-" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "-" : name
    }()

    /// The priority an event is logged at, as sudo's are: a failed
    /// authentication is an `alert`, a decision a `notice`, the rest `info`.
    static func priority(of event: AuditEvent) -> SecurityLog.Priority {
        switch event.outcome {
        case .authenticationFailed, .tooManyFailures, .tooManyTries: .alert
        case .directoryUnavailable: .warning
        case .approved, .denied, .revoked, .graduated, .forgotten: .notice
        default: .info
        }
    }

    /// Logs `event`, stored as number `id`.
    static func send(_ event: AuditEvent, id: Int64?) {
        let line = AuditLine(event, id: id, host: host)
        let priority = priority(of: event)
        if csdjournal_available() != 0 {
            let fields = line.journalFields(priority: priority)
            var pointers = fields.map { strdup($0) }
            defer { pointers.forEach { free($0) } }
            let sent = pointers.withUnsafeMutableBufferPointer { buffer in
                buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rebound in
                    csdjournal_send(rebound.baseAddress, rebound.count)
                }
            }
            if sent >= 0 { return }
        }
        SecurityLog.log(priority, line.text)
    }
}

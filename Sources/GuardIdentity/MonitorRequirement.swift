import SystemKit

/// What an app's desktop entry says keeping its monitor down costs the
/// child (`X-FamilyControls-MonitorRequired=lock` or `end`): the child's
/// sessions are locked or ended. Absent, the monitor is only restarted and
/// the guardians alerted.
///
/// Restarting cannot win against a process of the same user (a loop of
/// `kill`, `SIGSTOP`), so a required monitor makes keeping it down the
/// child's loss instead.
package enum MonitorRequirement {
    /// Reads `value`, the key's value as written.
    /// - Throws: ``MonitorRequirementError`` for anything but `lock` or `end`.
    package static func parse(_ value: String) throws(MonitorRequirementError) -> SessionConsequence {
        switch value {
        case "lock": return .lock
        case "end": return .end
        default: throw .unknown(value)
        }
    }

    /// What `entry` declares: nil when the key is absent.
    /// - Throws: ``MonitorRequirementError`` for a value other than `lock` or
    ///   `end`, or a required monitor the entry does not declare.
    package static func declared(in entry: DesktopEntry) throws(MonitorRequirementError) -> SessionConsequence? {
        guard let value = entry.monitorRequired else { return nil }
        let consequence = try parse(value)
        guard entry.monitor != nil else { throw .noMonitor }
        return consequence
    }

    /// How a guardian reads it, in a request's summary.
    package static func spoken(_ consequence: SessionConsequence) -> String {
        switch consequence {
        case .lock: "locks the child's sessions"
        case .end: "ends the child's sessions"
        }
    }
}

/// Why an `X-FamilyControls-MonitorRequired=` value is refused.
package enum MonitorRequirementError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknown(String)
    case noMonitor

    package var description: String {
        switch self {
        case .unknown(let value):
            "X-FamilyControls-MonitorRequired=\(DisplayText.sanitized(value).clipped) is neither lock nor end"
        case .noMonitor: "X-FamilyControls-MonitorRequired= is given without X-FamilyControls-Monitor="
        }
    }
}

/// What an audit event records someone doing.
///
/// An open set: the named constants are the Guard's own actions, and the
/// store keeps any other non-empty word as it is.
package struct AuditAction: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(stringLiteral value: String) {
        self.rawValue = value
    }

    package var description: String { rawValue }

    /// An app asked for authorization.
    package static let request = AuditAction(rawValue: "request")
    /// A guardian or individual approved.
    package static let approve = AuditAction(rawValue: "approve")
    /// A guardian chose "Don't Allow".
    package static let deny = AuditAction(rawValue: "deny")
    /// The request was canceled or the authentication failed.
    package static let cancel = AuditAction(rawValue: "cancel")
    /// An app or an administrator revoked an authorization.
    package static let revoke = AuditAction(rawValue: "revoke")
    /// A child became an adult, and their child authorizations ended.
    package static let graduate = AuditAction(rawValue: "graduate")
    /// Root removed every record of a user who no longer exists.
    package static let forget = AuditAction(rawValue: "forget")
    /// An administrator set a status directly.
    package static let set = AuditAction(rawValue: "set")
    /// The Guard locked an app directory.
    package static let lock = AuditAction(rawValue: "lock")
    /// The Guard released a lock.
    package static let unlock = AuditAction(rawValue: "unlock")
    /// An approved app asked to swap in a new version of itself.
    package static let update = AuditAction(rawValue: "update")
    /// The Guard fixed a lock that disagreed with the store (at start, say).
    package static let repair = AuditAction(rawValue: "repair")
}

extension AuditAction {
    /// A guardian's one-time code was enrolled or removed.
    package static let code = AuditAction(rawValue: "code")
}

extension AuditAction {
    /// An approved app's monitor started, ended, was restarted or continued, or stopped.
    package static let monitor = AuditAction(rawValue: "monitor")
}

extension AuditAction {
    /// Time limits an app set for its child were set, asked for, cleared or removed.
    package static let limits = AuditAction(rawValue: "limits")
    /// A child's session time: more time asked for or given, a warning given
    /// before it was up, or their sessions locked or ended when it was.
    package static let time = AuditAction(rawValue: "time")
    /// The time keeper's name for ``time``.
    package static let sessionTime = time
}

import FamilyControlsModel
import SystemKit
#if canImport(Glibc)
import Glibc
#endif

/// One line of the audit trail: who did what, to whose authorization, when, and how it ended.
package struct AuditEvent: Hashable, Sendable {
    /// The actor for events the Guard causes itself (a lock repair, say).
    package static let guardActor = "guard"
    /// The actor for an administrator acting through `familyctl`.
    package static let rootActor = "root"

    /// The row's number, assigned by the store in the order events were
    /// appended; nil for an event not yet stored (a value given here is ignored).
    package var id: Int64?
    /// Who acted: a user name, ``rootActor``, or ``guardActor``.
    package var actor: String
    /// What they did.
    package var action: AuditAction
    /// Whose authorization it concerns.
    package var user: String
    /// The app concerned, when the event is about one.
    package var appID: String?
    /// The kind of authorization concerned, when known.
    package var member: FamilyControlsMember?
    /// How it ended, in a word or two ("approved", "canceled", "failed").
    package var outcome: AuditOutcome
    /// Anything else worth keeping, such as an error message. Never a secret.
    package var detail: String?
    /// When it happened: the exact value stored, so an event read back
    /// equals the one appended.
    package var at: UnixTime
    /// How many times it happened: the same event again soon after is
    /// counted on its first row instead of adding one (see
    /// ``Store/appendAudit(_:coalescingWithin:amongLatest:)``).
    package var count: Int
    /// When it last happened, for an event that happened more than once.
    package var lastAt: UnixTime?

    /// The number of the pending request this event belongs to (`familyctl
    /// approve ID`), as its detail names it first: every event of a request's
    /// life (asked, decided, canceled, expired, a guardian's failed password)
    /// begins its detail `request ID`. Nil for the rest.
    package var requestID: Int64? {
        guard let detail, detail.hasPrefix("request ") else { return nil }
        let (digits, rest) = detail.dropFirst("request ".count).splitAtLeadingDigits
        guard digits.utf8.count <= 18, rest.isEmpty || rest.hasPrefix(":") else { return nil }
        return Int64(digits)
    }

    /// When it happened, in Unix seconds.
    package var atSeconds: Double {
        get { at.seconds }
        set { at.seconds = newValue }
    }

    package init(
        id: Int64? = nil, at: UnixTime, actor: String, action: AuditAction, user: String,
        appID: String? = nil, member: FamilyControlsMember? = nil, outcome: AuditOutcome, detail: String? = nil,
        count: Int = 1, lastAt: UnixTime? = nil
    ) {
        self.id = id
        self.actor = actor
        self.action = action
        self.user = user
        self.appID = appID
        self.member = member
        self.outcome = outcome
        self.detail = detail
        self.at = at
        self.count = count
        self.lastAt = lastAt
    }
}

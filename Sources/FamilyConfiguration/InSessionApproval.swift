/// `[Authentication] InSessionApproval=`: what a parent or guardian may do at
/// the child's own app, besides deciding from their own session.
package enum InSessionApproval: String, Hashable, Sendable {
    /// Nothing: a child's request waits for a guardian's own session.
    case no
    /// A guardian authenticates in the child's app on the guardian service,
    /// whatever it asks (a password typed there passes through the child's processes).
    case yes
    /// A guardian who enrolled a one-time code (`familyctl code enroll`) may
    /// type it in the child's app, checked on the guardian code service; the
    /// request may still wait for a guardian's own session.
    case code
}

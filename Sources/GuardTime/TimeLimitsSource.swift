import TimeLimits

/// Where the time keeper learns which children have limits in force: the
/// policy, which records the limits apps set and the more time guardians
/// give. The keeper reads it at every look and whenever it is told the
/// limits changed (``TimeKeeper/limitsChanged()``).
package protocol TimeLimitsSource: Sendable {
    /// Every child with limits in force now: their apps' limits combined,
    /// the apps' names, today's extra time and `openUntil`. A child absent
    /// here has no limits: no line in the login-limits file, and no session
    /// of theirs is locked or ended for time.
    func childrenWithLimits() -> [ChildTimeLimits]
}

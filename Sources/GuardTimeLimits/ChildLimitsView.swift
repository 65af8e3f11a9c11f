import TimeLimits

/// One child's time limits as `familyctl limits` shows them: each app's
/// setting, what is in force, today's time used and left, and when they may
/// next log in.
package struct ChildLimitsView: Sendable {
    package var inForce: ChildTimeLimits
    package var settings: [AppLimitsSetting]
    /// Session time used today, nil while nothing counts it.
    package var usedSeconds: Int?
    /// Session time left today under the daily allowance (more time
    /// included), nil without a daily limit or while the time used is unknown.
    package var leftSeconds: Int?
    /// Whether the child may log in now, as far as the hours (and the time
    /// used, when known) say.
    package var allowedNow: Bool
    /// When the child may next log in, when not now: `Mon 07:30`, or nil.
    package var nextAllowed: String?
}

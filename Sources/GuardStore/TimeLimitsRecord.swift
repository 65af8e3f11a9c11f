import SystemKit

/// The time limits one approved app set for its child, as the store keeps
/// them: the hours as written (`Mon-Fri 07:30-20:00`), the daily allowance
/// in seconds, and what happens when time is up. The policy reads the hours
/// again; a row it cannot read is reported, never trusted.
package struct TimeLimitsRecord: Hashable, Sendable {
    package var user: String
    package var uid: UInt32
    package var appID: String
    /// The hours as written, nil for no hours limit.
    package var hours: String?
    /// The daily allowance, nil for no daily limit.
    package var dailySeconds: Int?
    /// `lock` or `end`.
    package var atEnd: String
    /// Who set them: the child (through the app), a guardian, or root.
    package var setBy: String
    package var setAt: UnixTime

    package init(user: String, uid: UInt32, appID: String, hours: String?, dailySeconds: Int?, atEnd: String,
                 setBy: String, setAt: UnixTime = .now) {
        self.user = user
        self.uid = uid
        self.appID = appID
        self.hours = hours
        self.dailySeconds = dailySeconds
        self.atEnd = atEnd
        self.setBy = setBy
        self.setAt = setAt
    }
}

/// More session time a guardian gave a child for one local day, and until
/// when they may log in outside their hours.
package struct MoreTimeGrant: Hashable, Sendable {
    package var user: String
    package var uid: UInt32
    /// `YYYY-MM-DD`, the local day it counts on.
    package var day: String
    package var seconds: Int
    /// Unix seconds until which logins outside the hours are let in; 0 for none.
    package var openUntil: Double
    package var grantedBy: String
    package var grantedAt: UnixTime

    package init(user: String, uid: UInt32, day: String, seconds: Int, openUntil: Double, grantedBy: String,
                 grantedAt: UnixTime = .now) {
        self.user = user
        self.uid = uid
        self.day = day
        self.seconds = seconds
        self.openUntil = openUntil
        self.grantedBy = grantedBy
        self.grantedAt = grantedAt
    }
}

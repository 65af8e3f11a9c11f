import GuardStore
import TimeLimits

/// The limits one approved app set for one child, read back from the store.
package struct AppLimitsSetting: Sendable {
    package var record: TimeLimitsRecord
    package var limits: TimeLimits
    /// The app's name as the guardian saw it, else its ID.
    package var name: String

    /// Reads `record` again; nil for a row that does not read as limits (reported by the caller).
    init?(_ record: TimeLimitsRecord, name: String?) {
        guard let atEnd = TimeUpAction(rawValue: record.atEnd) else { return nil }
        var hours: LoginHours?
        if let text = record.hours {
            guard let parsed = try? LoginHours(parsing: text) else { return nil }
            hours = parsed
        }
        if let seconds = record.dailySeconds, !(0...86_400).contains(seconds) { return nil }
        self.record = record
        self.name = name ?? record.appID
        limits = TimeLimits(hours: hours, daily: record.dailySeconds.map(SessionDuration.init(seconds:)), atEnd: atEnd)
    }
}

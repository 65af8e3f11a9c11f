import SystemKit
import TimeLimits

/// Counts each child's session time in one local day: between two looks, a
/// child who had at least one session open at the first spent the time
/// between them (several sessions at once count once). Pure: the keeper
/// hands it the clock and the sessions, and writes what it counts to the
/// store.
package struct TimeCounter: Sendable, Equatable {
    /// The local day (`YYYY-MM-DD`) ``used`` is for.
    package private(set) var day: String
    /// Seconds used today by uid, fractions kept until written.
    package private(set) var used: [UInt32: Double]
    /// The uids that had a session open at the last look, and when it was.
    package private(set) var counting: Set<UInt32> = []
    private var lastLook: UnixTime?

    /// A counter for `day` that starts from `used` (what the store holds,
    /// after a restart of the Guard or of the machine).
    package init(day: String, used: [UInt32: Int] = [:]) {
        self.day = day
        self.used = used.mapValues(Double.init)
    }

    /// Today's whole seconds of `uid`.
    package func seconds(of uid: UInt32) -> Int { Int(used[uid] ?? 0) }

    /// Today's whole seconds, by uid.
    package var wholeSeconds: [UInt32: Int] { used.mapValues { Int($0) } }

    /// The day before the one the counter moved into, with its final totals.
    package struct FinishedDay: Sendable, Equatable {
        package var day: String
        package var used: [UInt32: Int]
    }

    /// Credits the time since the last look to each child that had a
    /// session then, and remembers who has one now (`open`).
    ///
    /// `elapsed` is the time that passed on the monotonic clock (which
    /// stands still while the machine sleeps, and never runs back); the
    /// wall clock `now` only says which local day it falls in. When `now`
    /// is in a new day, the part of `elapsed` since local midnight counts in
    /// it and the rest in the day before, which is returned with its final
    /// totals to be written down.
    package mutating func advance(to now: UnixTime, elapsed: Double, open: Set<UInt32>) -> FinishedDay? {
        let moment = LocalMoment(now)
        let spent = lastLook == nil ? 0 : max(0, elapsed)
        lastLook = now
        var finished: FinishedDay?
        if moment.day != day {
            let sinceMidnight = Double(moment.minute * 60 + moment.second)
            let before = max(0, spent - sinceMidnight)
            for uid in counting { used[uid, default: 0] = min(86_400, used[uid, default: 0] + before) }
            finished = FinishedDay(day: day, used: wholeSeconds)
            day = moment.day
            used = [:]
            for uid in counting { used[uid] = min(86_400, min(spent, sinceMidnight)) }
        } else {
            for uid in counting { used[uid, default: 0] = min(86_400, used[uid, default: 0] + spent) }
        }
        counting = open
        return finished
    }
}

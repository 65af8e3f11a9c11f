import GuardProtocol
import GuardStore
import SystemKit
import TimeLimits

extension ChildLimitsPolicy {
    /// Every child's limits in force (only `user`'s when given), from the
    /// settings of apps still approved for them. A setting that does not
    /// read is logged and left out, never guessed at.
    /// - Throws: when the store cannot be read.
    func views(user: String?) throws(GuardFailure) -> [ChildLimitsView] {
        var byUser: [(user: String, settings: [AppLimitsSetting])] = []
        for record in try storedLimits(user: user) {
            guard let approval = try ledger.authorization(user: record.user, appID: record.appID),
                  approval.status == .approved, approval.member == .child, approval.uid == record.uid else { continue }
            guard let setting = AppLimitsSetting(record, name: approval.displayName) else {
                logger.error("store: the time limits of \(record.appID) for \(record.user) do not read "
                    + "(hours \"\(DisplayText.sanitized(record.hours ?? "-", limit: 200))\", at end \(record.atEnd)); "
                    + "left out until they are set again")
                continue
            }
            if byUser.last?.user == record.user {
                byUser[byUser.count - 1].settings.append(setting)
            } else {
                byUser.append((record.user, [setting]))
            }
        }
        let now = clock()
        let moment = LocalMoment(now)
        var views: [ChildLimitsView] = []
        for (user, settings) in byUser {
            guard let combined = TimeLimits.combined(settings.map(\.limits)), combined.limitsAnything,
                  let uid = settings.first?.record.uid else { continue }
            let more: (seconds: Int, openUntil: Double)
            do throws(StoreError) {
                more = try store.moreTime(uid: uid, day: moment.day)
            } catch {
                logger.error("store: cannot read the more time of \(user): \(error)")
                throw .internalError("the Guard could not read the time limits in its store; see its log")
            }
            let openUntil = more.openUntil > now.seconds ? more.openUntil : 0
            let child = ChildTimeLimits(uid: uid, user: user, limits: combined, appNames: settings.map(\.name),
                                        day: moment.day, extraSeconds: more.seconds, openUntil: openUntil)
            let used = self.used(uid: uid, day: moment.day)
            let verdict = combined.verdict(at: moment, used: used ?? 0, extra: more.seconds,
                                           openSeconds: max(0, Int(openUntil - now.seconds)))
            let left = used.flatMap { used in combined.daily.map { max(0, $0.seconds + more.seconds - used) } }
            views.append(ChildLimitsView(inForce: child, settings: settings, usedSeconds: used, leftSeconds: left,
                                         allowedNow: verdict.isAllowed, nextAllowed: Self.nextAllowed(verdict, moment)))
        }
        return views
    }

    /// When a child refused now may log in again, as a person reads it.
    static func nextAllowed(_ verdict: TimeVerdict, _ moment: LocalMoment) -> String? {
        switch verdict {
        case .allowed: return nil
        case .outsideHours(let next?):
            let day = next.daysAhead == 0 ? "today" : LoginHours.weekdayNames[(moment.weekday + next.daysAhead) % 7]
            return "\(day) \(LoginHours.clock(next.minute))"
        case .outsideHours(nil): return "never: no day has hours"
        case .timeUsedUp(let at): return "tomorrow \(LoginHours.clock(at ?? 0))"
        }
    }

    /// Limits in words, for guardians and the audit trail: `hours Mon-Fri 07:30-20:00, 1h30m a day, then lock`.
    static func spoken(_ limits: TimeLimits?) -> String {
        guard let limits, limits.limitsAnything else { return "no time limits" }
        var parts: [String] = []
        if let hours = limits.hours { parts.append("hours \(hours.description)") }
        if let daily = limits.daily { parts.append("\(daily.description) a day") }
        return parts.joined(separator: ", ") + ", then \(limits.atEnd == .end ? "end the sessions" : "lock the screen")"
    }

    /// Limits as written (`hours`, `daily`: nil for none, `unlimited` where
    /// `unlimitedLifts` for lifting that kind), on top of `base`.
    /// - Throws: `InvalidArgument` saying what is wrong.
    static func parse(hours: String?, daily: String?, atEnd: String?, onto base: TimeLimits,
                      unlimitedLifts: Bool) throws(GuardFailure) -> TimeLimits {
        var limits = base
        do throws(TimeLimitsError) {
            if let hours {
                limits.hours = unlimitedLifts && hours == "unlimited" ? nil : try LoginHours(parsing: hours)
            }
            if let daily {
                limits.daily = unlimitedLifts && daily == "unlimited" ? nil : try SessionDuration(parsing: daily)
            }
        } catch {
            throw GuardFailure(.familyControls(.invalidArgument), error.description)
        }
        if let atEnd {
            guard let action = TimeUpAction(rawValue: atEnd) else {
                throw GuardFailure(.familyControls(.invalidArgument), "at end is lock or end, not \"\(atEnd.clipped)\"")
            }
            limits.atEnd = action
        }
        return limits
    }

    /// Records `limits` as `appID`'s for the child of `approval`, audited;
    /// limits that limit nothing remove the app's.
    func save(_ limits: TimeLimits, user: String, uid: UInt32, appID: String, by actor: String,
              outcome: AuditOutcome, detail: String) throws(GuardFailure) {
        let event = ledger.event(.limits, actor: actor, user: user, appID: appID, member: .child, outcome: outcome,
                                 detail: "\(detail): \(Self.spoken(limits))")
        do throws(StoreError) {
            if limits.limitsAnything {
                try store.saveTimeLimits(TimeLimitsRecord(
                    user: user, uid: uid, appID: appID, hours: limits.hours?.description, dailySeconds: limits.daily?.seconds,
                    atEnd: limits.atEnd.rawValue, setBy: actor, setAt: clock()), audit: event)
            } else {
                try store.deleteTimeLimits(user: user, appID: appID, audit: event)
            }
        } catch {
            logger.error("store: cannot record the time limits of \(appID) for \(user): \(error)")
            throw .internalError("the Guard could not record the time limits in its store; see its log")
        }
        logger.notice("limits: \(appID) for \(user): \(Self.spoken(limits)) (\(outcome), by \(actor))")
        changed()
    }

    /// Gives `seconds` more session time today to `child`; outside their
    /// hours now, also lets them log in for that long.
    func give(_ seconds: Int, to child: ChildTimeLimits, by actor: String, detail: String) throws(GuardFailure) {
        let now = clock()
        let moment = LocalMoment(now)
        let outside = child.limits.hours.map { !$0.allows(weekday: moment.weekday, minute: moment.minute) } ?? false
        let openUntil = outside ? max(child.openUntil, now.seconds) + Double(seconds) : 0
        let grant = MoreTimeGrant(user: child.user, uid: child.uid, day: moment.day, seconds: seconds, openUntil: openUntil,
                                  grantedBy: actor, grantedAt: now)
        let words = SessionDuration(seconds: seconds).spoken
        do throws(StoreError) {
            try store.grantMoreTime(grant, audit: ledger.event(
                .time, actor: actor, user: child.user, appID: nil, member: .child, outcome: .granted,
                detail: "\(detail): \(words) more today" + (outside ? ", and logins outside the hours for as long" : "")))
            try store.pruneMoreTime(before: moment.day)
        } catch {
            logger.error("store: cannot record more time for \(child.user): \(error)")
            throw .internalError("the Guard could not record the more time in its store; see its log")
        }
        logger.notice("limits: \(words) more for \(child.user) today (by \(actor))")
        changed()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity
import GuardSessions
import GuardStore
import TimeLimits

extension TimeKeeper {
    /// The keeper's thread: the counter, what was done for each child, and
    /// when the store and the file were last written, owned by the thread alone.
    final class Worker {
        let context: Context
        let keeper: TimeKeeper
        let wakeUp: EventCounter
        let rules: TimeRules
        var counter = TimeCounter(day: "")
        var states: [UInt32: TimeRules.State] = [:]
        var lastLook = MonotonicInstant.now
        var lastRecord = MonotonicInstant.now
        var lastFile = MonotonicInstant.now
        /// What the file last written said, but for the time used and when it was written.
        var lastFileKey: String?
        /// Children whose last warning reached no terminal and no desktop,
        /// and until when it is told again at each look: a desktop's bus and
        /// notification server start after the login that made it due.
        var untold: [UInt32: MonotonicInstant] = [:]

        init(context: Context, keeper: TimeKeeper, wakeUp: EventCounter) {
            self.context = context
            self.keeper = keeper
            self.wakeUp = wakeUp
            rules = TimeRules(limits: context.limits)
        }

        func run() {
            let day = LocalMoment(.now).day
            var used: [UInt32: Int] = [:]
            do throws(StoreError) {
                used = try context.store.timeUsed(on: day)
            } catch {
                context.logger.error("time: cannot read today's session time from the store (\(error)); counting from 0")
            }
            counter = TimeCounter(day: day, used: used)
            if !used.isEmpty {
                context.logger.notice("time: today's session time so far, from the store: "
                    + used.sorted { $0.key < $1.key }.map { "uid \($0.key) \(SessionDuration(seconds: $0.value))" }.joined(separator: ", "))
            }
            while true {
                let stopping = keeper.isStopping
                let next = look(final: stopping)
                if stopping { return }
                wait(until: next)
            }
        }

        /// Waits for a wake-up, a change logind reports, or `next`.
        func wait(until next: MonotonicInstant) {
            guard case .watched(let logind) = context.sessionChanges else {
                _ = try? Poll.wait(for: Int16(POLLIN), on: wakeUp.rawValue, until: next)
                wakeUp.drain()
                return
            }
            var deadline = next
            if let wanted = logind.changeTimeout { deadline = min(deadline, .now.advanced(by: .milliseconds(Int64(wanted)))) }
            let ready = (try? Poll.wait(for: [(wakeUp.rawValue, Int16(POLLIN)), (logind.changeDescriptor, logind.changeEvents)],
                                        until: deadline)) ?? [0, 0]
            if ready[0] != 0 { wakeUp.drain() }
            if ready[1] != 0 { logind.acknowledgeChange() }
        }

        /// Counts, decides, acts, writes; returns when to look next.
        func look(final: Bool) -> MonotonicInstant {
            let now = UnixTime.now, clock = MonotonicInstant.now
            let elapsed = Self.seconds(lastLook.duration(to: clock))
            lastLook = clock
            let sessions = context.sessions()
            let children = context.source.childrenWithLimits().filter { $0.limits.limitsAnything }
            let uids = Set(children.map(\.uid))
            let open = Set(sessions.map(\.session.uid)).intersection(uids)
            let closed = !counter.counting.subtracting(open).isEmpty
            if let finished = counter.advance(to: now, elapsed: elapsed, open: open) {
                record(finished.used, day: finished.day, now: now)
                context.logger.info("time: a new day, \(counter.day): the session time of \(finished.day) is written down")
            }
            let moment = LocalMoment(now)
            // Every session's opening wakes the keeper unless it is unwatched: then nothing is
            // due while no child with limits is logged in.
            let idle: Bool = if case .unwatched = context.sessionChanges { children.isEmpty } else { open.isEmpty }
            var next = clock.advanced(by: idle ? context.limits.timeRecordInterval : context.limits.timeLookInterval)
            var up: [UInt32] = []
            states = states.filter { uids.contains($0.key) }
            for child in children {
                let theirs = sessions.filter { $0.session.uid == child.uid }
                var state = states[child.uid] ?? TimeRules.State()
                let (actions, left) = rules.decide(child, used: counter.seconds(of: child.uid), moment: moment, now: now,
                                                   clock: clock, hasSessions: !theirs.isEmpty && !final, state: &state)
                states[child.uid] = state
                if left == 0 { up.append(child.uid) }
                for action in actions { act(action, child: child, sessions: theirs) }
                if let left, left > 0, !actions.contains(where: \.isWarning) { tellAgain(child, left: left, sessions: theirs, clock: clock) }
                if let left, left > 0, !theirs.isEmpty {
                    let until = rules.warnings.filter { $0 < left }.map { left - $0 }.min() ?? left
                    next = min(next, clock.advanced(by: .seconds(max(1, until))))
                }
            }
            let recordDue = !counter.counting.isEmpty && !(clock < lastRecord.advanced(by: context.limits.timeRecordInterval))
            if final || closed || recordDue {
                record(counter.wholeSeconds, day: counter.day, now: now)
            }
            writeFile(children, up: up, now: now, clock: clock, force: final || closed)
            keeper.publish(day: counter.day, used: counter.wholeSeconds)
            return next
        }

        func act(_ action: TimeRules.Action, child: ChildTimeLimits, sessions: [MonitorSession]) {
            let names = sessions.map(\.name).joined(separator: ", ")
            switch action {
            case .warn(let left):
                let told = context.messenger.tell(TimeRules.warning(secondsLeft: left, for: child), in: sessions)
                untold[child.uid] = told.isEmpty ? MonotonicInstant.now.advanced(by: context.limits.timeWarningToldAgainFor) : nil
                report(child, warnedWith: left, on: told, sessions: sessions, again: false)
            case .enforce(let consequence, let reason, let first):
                let done = consequence == .lock ? "locked" : "ended"
                if first {
                    context.logger.warning("time: \(child.user)'s sessions \(names) are \(done): \(reason)")
                    context.audit(AuditOutcome(rawValue: done), child.user, "sessions \(names) \(done): \(reason)")
                } else {
                    context.logger.info("time: \(child.user)'s sessions \(names) are \(done) again: \(reason)")
                }
                context.enforcer.enforce(consequence, on: sessions, reason: reason)
            }
        }

        /// Tells `child` again, with the time now left, a warning that
        /// reached nowhere, until it reaches somewhere or
        /// ``GuardLimits/timeWarningToldAgainFor`` passes.
        func tellAgain(_ child: ChildTimeLimits, left: Int, sessions: [MonitorSession], clock: MonotonicInstant) {
            guard let until = untold[child.uid] else { return }
            guard !sessions.isEmpty, clock < until else {
                untold[child.uid] = nil
                return
            }
            let told = context.messenger.tell(TimeRules.warning(secondsLeft: left, for: child), in: sessions)
            guard !told.isEmpty else { return }
            untold[child.uid] = nil
            report(child, warnedWith: left, on: told, sessions: sessions, again: true)
        }

        /// Logs and audits a warning told on `told` (nowhere when empty).
        func report(_ child: ChildTimeLimits, warnedWith left: Int, on told: [String], sessions: [MonitorSession], again: Bool) {
            let names = sessions.map(\.name).joined(separator: ", ")
            let places = told.isEmpty ? "no terminal" : told.joined(separator: ", ")
            let late = again ? ", which the first warning did not reach" : ""
            context.logger.notice("time: \(child.user) warned\(again ? " again" : ""), \(TimeRules.spoken(left)) left, on "
                + places + " (sessions \(names))" + late)
            context.audit("warned", child.user, "\(TimeRules.spoken(left)) left before the sessions are "
                + (child.limits.atEnd == .end ? "ended" : "locked") + "; told on " + places + late)
        }

        func record(_ used: [UInt32: Int], day: String, now: UnixTime) {
            lastRecord = MonotonicInstant.now
            guard !used.isEmpty else { return }
            let oldest = LocalMoment(UnixTime(seconds: now.seconds - Double(context.limits.timeDaysKept) * 86_400)).day
            do throws(StoreError) {
                try context.store.recordTimeUsed(used, on: day, at: now, keepFrom: oldest)
            } catch {
                context.logger.error("time: cannot write the session time of \(day) to the store: \(error)")
            }
        }

        /// Writes the file when what it says changed (children, limits, the
        /// day, whose time is up), when `force`d, and at least every
        /// ``GuardLimits/timeRecordInterval`` while a child with a daily limit is logged in.
        func writeFile(_ children: [ChildTimeLimits], up: [UInt32], now: UnixTime, clock: MonotonicInstant, force: Bool) {
            let key = LoginLimitsFile.text(children, used: [:], day: counter.day, at: UnixTime(seconds: 0))
                + "up " + up.sorted().map(String.init).joined(separator: ",")
            let dailyLoggedIn = children.contains { $0.limits.daily != nil && counter.counting.contains($0.uid) }
            let due = dailyLoggedIn && !(clock < lastFile.advanced(by: context.limits.timeRecordInterval))
            guard force || due || key != lastFileKey else { return }
            let text = LoginLimitsFile.text(children, used: counter.wholeSeconds, day: counter.day, at: now)
            do throws(Errno) {
                try LoginLimitsFile.write(text, to: context.filePath)
                lastFileKey = key
                lastFile = clock
            } catch {
                context.logger.error("time: cannot write \(context.filePath): \(error); the PAM module decides from the last one")
            }
        }

        static func seconds(_ duration: Duration) -> Double {
            let (seconds, attoseconds) = duration.components
            return Double(seconds) + Double(attoseconds) / 1e18
        }
    }
}

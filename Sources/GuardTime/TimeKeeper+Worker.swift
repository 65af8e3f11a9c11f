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
                _ = try? Poll.wait(for: Int16(POLLIN), on: wakeUp.rawValue, until: next)
                wakeUp.drain()
            }
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
            var next = clock.advanced(by: children.isEmpty ? context.limits.timeRecordInterval : context.limits.timeLookInterval)
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
                let ending = child.limits.atEnd == .end ? "your session will end" : "your screen will lock"
                let message = "\(Self.spoken(left)) left: then \(ending) (time limit set by \(TimeRules.names(child)))"
                let told = context.messenger.tell(message, in: sessions)
                context.logger.notice("time: \(child.user) warned, \(Self.spoken(left)) left, on "
                    + (told.isEmpty ? "no terminal" : told.joined(separator: ", ")) + " (sessions \(names))")
                context.audit("warned", child.user, "\(Self.spoken(left)) left before the sessions are "
                    + (child.limits.atEnd == .end ? "ended" : "locked") + "; told on "
                    + (told.isEmpty ? "no terminal" : told.joined(separator: ", ")))
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

        /// `5 minutes`, `1 minute`, `30 seconds`.
        static func spoken(_ seconds: Int) -> String {
            if seconds >= 120 { return "\((seconds + 30) / 60) minutes" }
            if seconds >= 60 { return "1 minute" }
            return seconds == 1 ? "1 second" : "\(seconds) seconds"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit
import GuardStore

extension MonitorKeeper.Supervisor {
    // MARK: A monitor that ended: restarts, alerts, and what keeping it down costs

    /// `instance` ended, not asked to: when it starts again, and the row that says so.
    ///
    /// Killed by a signal (any: the Guard signals only monitors it stops
    /// for good, so a `SIGSEGV` or `SIGABRT` may as well be the child's
    /// `kill`), or any ending of a required monitor: at once, within a
    /// generous bound of ten times `RestartsPerMinute=` a minute that only a
    /// loop reaches. Ended by itself (an exit): at once three times, then
    /// after 0.5 s, 1 s, 2 s… up to 30 s while it keeps ending within 10 s
    /// of its start, and never more than `RestartsPerMinute=` times a minute.
    func ended(_ instance: Instance, how: String, killedBy signal: CInt? = nil, startFailed: Bool = false) {
        let key = instance.key
        let now = MonotonicInstant.now
        let configuration = context.configuration()
        let ran = instance.startedAt.duration(to: now)
        // A start that fails backs off as an exit does (it would fail again at once).
        let killed = signal != nil || (instance.launch.required != nil && !startFailed)
        if !killed { instance.quickEndings = ran < Self.steadyRun ? instance.quickEndings + 1 : 0 }
        var delay: Duration = killed || instance.quickEndings <= 3
            ? .zero : .milliseconds(min(500 << min(instance.quickEndings - 4, 10), 30_000))
        let recent = instance.starts.filter { now < $0.advanced(by: .seconds(60)) }
        instance.starts = recent
        let perMinute = killed ? configuration.monitorRestartsPerMinute * 10 : configuration.monitorRestartsPerMinute
        var limited = false
        if recent.count >= perMinute, let oldest = recent.dropLast(perMinute - 1).last {
            let wait = now.duration(to: oldest.advanced(by: .seconds(60)))
            if wait > delay {
                delay = wait
                limited = true
            }
        }
        instance.restartDue = now.advanced(by: delay)
        instance.snapshot.state = .waiting
        instance.snapshot.pid = 0
        instance.snapshot.ended = how.hasPrefix("ended by ") ? String(how.dropFirst("ended by ".count)) : how
        instance.snapshot.restarts += 1
        instance.snapshot.restartAt = delay == .zero ? nil : UnixTime(seconds: UnixTime.now.seconds + Self.seconds(delay))
        instance.restartTimes = instance.restartTimes.filter { now < $0.advanced(by: Self.alertWindow) } + [now]
        let waiting = Self.seconds(delay)
        let outcome: AuditOutcome = delay == .zero ? "restarted" : "waiting"
        let after = delay == .zero ? "restarted" : "starts again in \(Self.spoken(waiting))"
            + (limited ? " (\(perMinute) starts a minute at most)" : "")
        // Published at once: its pid is no longer vouched for once reaped.
        publish()
        keptDown(instance, how: how)
        // Started first: the row and the log line wait, the monitor does not.
        if delay == .zero { start(instance, first: false) }
        context.logger.warning("monitor: \(key.appID) for \(key.user) in session \(key.session) \(how); \(after)")
        context.audit(outcome, key.user, key.appID, "monitor of \(key.appID) for \(key.user) \(how); \(after)")
        alertIfDue(instance, ended: instance.snapshot.ended ?? how, delay: delay, limited: limited)
    }

    /// Tells the guardians of a monitor that keeps ending or being stopped,
    /// at most once per ``alertWindow``; in a session younger than
    /// ``shortSession`` the alert waits, and is dropped if the session ends first.
    func alertIfDue(_ instance: Instance, ended: String, delay: Duration, limited: Bool) {
        let now = MonotonicInstant.now, key = instance.key
        guard instance.restartTimes.count >= Self.alertAfter || limited,
              instance.lastAlert.map({ !(now < $0.advanced(by: Self.alertWindow)) }) ?? true else { return }
        instance.lastAlert = now
        let alert = MonitorAlert(appID: key.appID, appName: instance.launch.appName, user: key.user,
                                 session: key.session, restarts: instance.restartTimes.count,
                                 windowSeconds: Int(Self.seconds(Self.alertWindow)), ended: ended,
                                 waitingSeconds: delay == .zero ? nil : max(1, Int(Self.seconds(delay).rounded(.up))))
        if isShort(instance.session) {
            instance.pendingAlert = alert
        } else {
            keeper.raise(alert)
        }
    }

    /// Whether `session` opened less than ``shortSession`` ago.
    func isShort(_ session: MonitorSession) -> Bool {
        UnixTime.now.seconds - session.session.openedAt.seconds < Self.seconds(Self.shortSession)
    }

    /// A required monitor ended, was stopped or could not start (`how`):
    /// past ``keptDownAfter`` times within ``keptDownWindow``, the child's
    /// sessions are locked or ended as its app declares, once (not again
    /// for ``enforcedAgainAfter``), the guardians alerted and the audit
    /// trail told.
    func keptDown(_ instance: Instance, how: String) {
        guard let consequence = instance.launch.required else { return }
        let now = MonotonicInstant.now, key = instance.key
        instance.downTimes = instance.downTimes.filter { now < $0.advanced(by: Self.keptDownWindow) } + [now]
        guard instance.downTimes.count >= Self.keptDownAfter,
              instance.lastEnforced.map({ !(now < $0.advanced(by: Self.enforcedAgainAfter)) }) ?? true else { return }
        instance.lastEnforced = now
        instance.downTimes = []
        let targets = sessions.filter { $0.session.uid == instance.uid && $0.session.user == key.user }
        let done = consequence == .lock ? "locked" : "ended"
        let window = Int(Self.seconds(Self.keptDownWindow))
        let reason = "the required monitor of \(key.appID) was kept down in session \(key.session) "
            + "(\(Self.keptDownAfter) times within \(window) s, last \(how))"
        let names = targets.map(\.name).joined(separator: ", ")
        context.logger.error("monitor: \(key.user)'s sessions \(names) are \(done): \(reason)")
        context.audit(AuditOutcome(rawValue: done), key.user, key.appID,
                      "monitor of \(key.appID) for \(key.user) kept down in session \(key.session) (\(Self.keptDownAfter) "
                      + "times within \(window) s, last \(how)): sessions \(names) \(done)")
        context.enforcer.enforce(consequence, on: targets, reason: reason)
        keeper.raise(MonitorAlert(appID: key.appID, appName: instance.launch.appName, user: key.user,
                                  session: key.session, restarts: instance.restartTimes.count,
                                  windowSeconds: window, ended: how, waitingSeconds: nil, consequence: consequence))
    }
}

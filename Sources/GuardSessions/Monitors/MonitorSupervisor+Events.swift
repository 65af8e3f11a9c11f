#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit

extension MonitorKeeper.Supervisor {
    // MARK: Waiting for events

    /// Holds a pidfd of each session's leader, and no other.
    func watchLeaders() {
        var watched: [String: FileDescriptor] = [:]
        for session in sessions {
            watched[session.name] = leaders[session.name] ?? ProcessHandle.open(pid: session.session.leader)
        }
        leaders = watched
    }

    /// Waits in `poll(2)` for an event: the wake-up counter (a session
    /// opened or closed, an approval changed), a monitor's pidfd or output,
    /// `SIGCHLD`, logind's descriptor, a session leader's pidfd. A timeout
    /// only for what is due: a restart, a kill, a held alert, the next
    /// reading of the approvals while one is approved, logind's own, and ``look`` while something
    /// has no event.
    func wait() {
        var descriptors = [pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
        for instance in instances.values + leaving {
            if let process = instance.process, process.exit == nil {
                descriptors.append(pollfd(fd: process.pidfd.rawValue, events: Int16(POLLIN), revents: 0))
            }
            if let output = instance.output { descriptors.append(pollfd(fd: output.rawValue, events: Int16(POLLIN), revents: 0)) }
        }
        let childIndex = descriptors.count
        if let childSignal { descriptors.append(pollfd(fd: childSignal.descriptor.rawValue, events: Int16(POLLIN), revents: 0)) }
        let leadersFrom = descriptors.count
        for leader in leaders.values { descriptors.append(pollfd(fd: leader.rawValue, events: Int16(POLLIN), revents: 0)) }
        let leadersTo = descriptors.count
        let logind = context.logind
        if let logind { descriptors.append(pollfd(fd: logind.changeDescriptor, events: logind.changeEvents, revents: 0)) }
        let milliseconds = timeout(logind: logind).map {
            CInt(clamping: $0.components.seconds * 1000 + ($0.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        } ?? -1
        _ = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
        if childSignal != nil, descriptors[childIndex].revents != 0 { childSignal?.drain() }
        if descriptors[0].revents != 0 {
            var value: UInt64 = 0
            _ = read(wakeUp, &value, MemoryLayout<UInt64>.size)
            woken = true
        }
        if descriptors[leadersFrom..<leadersTo].contains(where: { $0.revents != 0 }) { woken = true }
        if let logind, descriptors.last?.revents ?? 0 != 0 {
            logind.acknowledgeChange()
            woken = true
        }
    }

    /// How long `poll(2)` may wait: until the first thing due; nil for no bound.
    func timeout(logind: LogindSessions?) -> Duration? {
        let now = MonotonicInstant.now
        var due: [Duration] = []
        if let reread = approvalsRereadAt { due.append(now.duration(to: reread)) }
        if let wanted = logind?.changeTimeout { due.append(.milliseconds(Int64(max(wanted, 0)))) }
        for instance in instances.values {
            if let restart = instance.restartDue { due.append(now.duration(to: restart)) }
            if instance.pendingAlert != nil {
                let opened = instance.session.session.openedAt.seconds
                due.append(.milliseconds(Int64(max(0, (opened + Self.seconds(Self.shortSession) - UnixTime.now.seconds) * 1000))))
            }
            if instance.process != nil, childSignal == nil || (instance.sandboxFiles != nil && !instance.sandboxShown) {
                due.append(Self.look)
            }
        }
        for instance in leaving {
            if let kill = instance.killAt { due.append(now.duration(to: kill)) }
        }
        return due.min().map { max($0, .zero) }
    }

    func service() {
        for instance in Array(instances.values) {
            drain(instance)
            guard let process = instance.process, let event = process.poll() else { continue }
            switch event {
            case .stopped(let signal):
                let how = "stopped by signal \(signal)"
                guard process.send(SIGCONT) else {
                    context.logger.error("monitor: \(instance.key.appID) for \(instance.key.user) was \(how) and cannot be "
                        + "continued: \(Errno.current("pidfd_send_signal")) (the Guard needs CAP_KILL)")
                    continue
                }
                instance.snapshot.ended = how
                context.logger.warning("monitor: \(instance.key.appID) for \(instance.key.user) was \(how); continued")
                context.audit("continued", instance.key.user, instance.key.appID,
                              "monitor of \(instance.key.appID) for \(instance.key.user) \(how); continued")
                let now = MonotonicInstant.now
                instance.restartTimes = instance.restartTimes.filter { now < $0.advanced(by: Self.alertWindow) } + [now]
                alertIfDue(instance, ended: how, delay: .zero, limited: false)
                keptDown(instance, how: how)
            case .exited, .killed:
                drain(instance)
                instance.output = nil
                instance.process = nil
                if let refusal = instance.refusal {
                    ended(instance, how: "was not the approved app: \(refusal)", startFailed: true)
                } else if case .killed(let signal, _) = event {
                    ended(instance, how: "ended by \(event)", killedBy: signal)
                } else {
                    ended(instance, how: "ended by \(event)")
                }
            }
        }
        for instance in instances.values where instance.sandboxFiles != nil && !instance.sandboxShown {
            checkSandbox(instance)
        }
        let now = MonotonicInstant.now
        for instance in instances.values where instance.pendingAlert != nil && !isShort(instance.session) {
            if let alert = instance.pendingAlert { keeper.raise(alert) }
            instance.pendingAlert = nil
        }
        leaving.removeAll { instance in
            drain(instance)
            _ = instance.process?.poll()
            if instance.process?.exit != nil || instance.process == nil { return true }
            if let killAt = instance.killAt, !(now < killAt) {
                instance.process?.send(SIGKILL)
                instance.killAt = now.advanced(by: .seconds(3600))
            }
            return false
        }
        publish()
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity

extension SessionEnforcer {
    /// One session being locked or ended, step by step, each step due at an
    /// instant: many sessions wait out their grace periods together.
    final class Job {
        enum Step {
            /// Nothing done yet (or, after a lock that did not hold, the end to start).
            case start
            /// logind was asked to lock it: its `LockedHint` is read when due.
            case awaitingLock
            /// logind was asked to end it: its leader (pinned, when known) must be gone when due.
            case awaitingTermination(leader: FileDescriptor?)
            /// Its processes were signalled: what is left is killed when due.
            case awaitingKill(SessionProcesses)
        }

        var session: MonitorSession
        /// What the caller asked.
        let asked: SessionConsequence
        /// What is being done: an end, once a lock cannot be.
        var consequence: SessionConsequence
        let reason: String
        var step = Step.start
        var due = MonotonicInstant.now
        var notes: [String] = []

        init(_ request: Request) {
            session = request.session
            asked = request.consequence
            consequence = request.consequence
            reason = request.reason
        }
    }

    /// The thread's side: the jobs under way, owned by the thread alone.
    final class Worker {
        private let inbox: Inbox
        private let limits: GuardLimits
        private let logger: Logger
        private let usesLogind: Bool
        private var jobs: [Job] = []
        /// When the worker first saw the enforcer stopping.
        private var stoppingSince: MonotonicInstant?

        init(inbox: Inbox, limits: GuardLimits, logger: Logger, usesLogind: Bool) {
            self.inbox = inbox
            self.limits = limits
            self.logger = logger
            self.usesLogind = usesLogind
        }

        func run() {
            while true {
                let (requests, stopping) = inbox.state.withLock { state in
                    // Counted as active as they are taken, so that the enforcer is never idle in between.
                    defer {
                        state.active += state.requests.count
                        state.requests.removeAll()
                    }
                    return (state.requests, state.stopping)
                }
                for request in requests { admit(request) }
                let now = MonotonicInstant.now
                if stopping {
                    if jobs.isEmpty { return }
                    // A stopping Guard waits for what is under way, but never for
                    // longer than two grace periods: a SIGTERM must stop it.
                    let deadline = stoppingSince.map { $0 + limits.sessionEndGrace * 2 } ?? now + limits.sessionEndGrace * 2
                    stoppingSince = stoppingSince ?? now
                    if now >= deadline {
                        for job in jobs {
                            logger.warning("session: \(job.session.name) of \(job.session.session.user) is left as it is: "
                                + "the Guard is stopping")
                        }
                        return
                    }
                }
                var finished: [SessionEnforcement] = []
                jobs = jobs.filter { job in
                    guard job.due <= now || isSettledEarly(job) else { return true }
                    if let outcome = advance(job) {
                        finished.append(outcome)
                        return false
                    }
                    return true
                }
                for outcome in finished { report(outcome) }
                inbox.state.withLock { state in
                    state.active = jobs.count
                    state.outcomes.append(contentsOf: finished)
                    state.outcomes.removeFirst(max(0, state.outcomes.count - limits.sessionOutcomesKept))
                }
                waitForWork()
            }
        }

        /// Takes `request` on, unless its session is under way already: then
        /// an end asked of a session being locked makes it an end at once.
        private func admit(_ request: Request) {
            if let current = jobs.first(where: { $0.session.name == request.session.name }) {
                if request.consequence == .end, current.consequence == .lock, case .awaitingLock = current.step {
                    current.consequence = .end
                    current.notes.append("an end was asked while it was being locked")
                    current.step = .start
                    current.due = .now
                }
                return
            }
            jobs.append(Job(request))
        }

        /// Whether `job` can go on before it is due: every process it waits for has exited.
        private func isSettledEarly(_ job: Job) -> Bool {
            switch job.step {
            case .awaitingKill(let processes): processes.waiting.isEmpty
            case .awaitingTermination(let leader?): ProcessHandle.hasExited(pidfd: leader.rawValue)
            default: false
            }
        }

        /// Sleeps until the next job is due (at most 50 ms while processes
        /// are awaited, so an early end is seen) or a caller wakes it.
        private func waitForWork() {
            let earliest = jobs.map(\.due).min()
            let awaitingProcesses = jobs.contains { job in
                switch job.step {
                case .awaitingKill, .awaitingTermination: true
                default: false
                }
            }
            var deadline = earliest
            if awaitingProcesses || inbox.wakeUp == nil {
                let tick = MonotonicInstant.now + .milliseconds(50)
                deadline = min(deadline ?? tick, tick)
            }
            // Idle, it still looks once a second: a stop whose wake-up was not
            // seen (a whole-suite run of the tests showed one) ends within it.
            deadline = deadline ?? MonotonicInstant.now + .seconds(1)
            guard let wakeUp = inbox.wakeUp else {
                SystemThread.sleep(for: MonotonicInstant.now.duration(to: deadline ?? .now))
                return
            }
            _ = try? Poll.wait(for: Int16(POLLIN), on: wakeUp.rawValue, until: deadline)
            wakeUp.drain()
        }

        /// Takes `job`'s next step.
        /// - Returns: the outcome, once it has one.
        private func advance(_ job: Job) -> SessionEnforcement? {
            switch job.step {
            case .start:
                if usesLogind, let id = job.session.session.sessionID { return startWithLogind(job, id: id) }
                if job.consequence == .lock {
                    job.notes.append("without logind there is no screen to lock; ended instead")
                }
                return startSignals(job)
            case .awaitingLock:
                return checkLock(job)
            case .awaitingTermination(let leader):
                guard let leader, !ProcessHandle.hasExited(pidfd: leader.rawValue) else {
                    return outcome(job, .terminated)
                }
                job.notes.append("its leader outlived logind's TerminateSession by the grace period")
                return killAtOnce(job)
            case .awaitingKill(let processes):
                let surviving = processes.kill(rounds: limits.sessionKillRounds, tableLimit: limits.processesReadAtOnce)
                return outcome(job, .ended(signalled: processes.signalled, killed: processes.killed, surviving: surviving))
            }
        }

        private func startWithLogind(_ job: Job, id: String) -> SessionEnforcement? {
            let manager: LogindManager
            do throws(LogindCallFailure) {
                manager = try LogindManager(timeout: limits.sessionEndGrace)
            } catch {
                return fallBackToSignals(job, because: "\(error)")
            }
            // sd-login of libsystemd 252 does not say who a session's leader
            // is; logind's bus does, and the ways back to signals need it.
            if job.session.session.leader <= 0, let leader = try? manager.leader(of: id) {
                job.session.session.leader = leader
            }
            if job.consequence == .lock {
                do throws(LogindCallFailure) {
                    try manager.lock(id)
                    job.step = .awaitingLock
                    job.due = .now + limits.sessionEndGrace
                    return nil
                } catch .noSuchSession {
                    return fallBackToSignals(job, because: "logind has no session \(id)")
                } catch {
                    job.notes.append("logind refused the lock (\(error)); ended instead")
                    job.consequence = .end
                }
            }
            do throws(LogindCallFailure) {
                let leader = job.session.session.leader > 1 ? ProcessHandle.open(pid: job.session.session.leader) : nil
                try manager.terminate(id)
                job.step = .awaitingTermination(leader: leader)
                job.due = .now + limits.sessionEndGrace
                return nil
            } catch .noSuchSession {
                return fallBackToSignals(job, because: "logind has no session \(id)")
            } catch {
                return fallBackToSignals(job, because: "\(error)")
            }
        }

        /// logind could not act: the session is ended by signals, if its leader is known.
        private func fallBackToSignals(_ job: Job, because why: String) -> SessionEnforcement? {
            job.notes.append("\(why); ended by signals instead")
            return startSignals(job)
        }

        private func checkLock(_ job: Job) -> SessionEnforcement? {
            guard let id = job.session.session.sessionID else { return startSignals(job) }
            let locked: Bool
            do throws(LogindCallFailure) {
                locked = try LogindManager(timeout: limits.sessionEndGrace).isLocked(id)
            } catch .noSuchSession {
                return outcome(job, .alreadyOver("logind has no session \(id) any more"))
            } catch {
                locked = false
                job.notes.append("its LockedHint cannot be read: \(error)")
            }
            if locked { return outcome(job, .locked) }
            job.notes.append("no screen locker locked it within \(limits.sessionEndGrace); ended instead")
            job.consequence = .end
            job.step = .start
            return startWithLogind(job, id: id)
        }

        /// Signals the session's processes; what is left is killed when the grace period is over.
        private func startSignals(_ job: Job) -> SessionEnforcement? {
            job.consequence = .end
            let table = ProcessRecord.all(limit: limits.processesReadAtOnce)
            do throws(SessionProcesses.Refusal) {
                let processes = try SessionProcesses.signal(job.session, in: table, limit: limits.processesEndedAtOnce)
                job.step = .awaitingKill(processes)
                job.due = .now + limits.sessionEndGrace
                return nil
            } catch .leaderGone {
                return outcome(job, .alreadyOver("\(SessionProcesses.Refusal.leaderGone)"))
            } catch {
                return outcome(job, .failed("\(error)"))
            }
        }

        /// Kills the session's processes without a further grace period (logind gave them one).
        private func killAtOnce(_ job: Job) -> SessionEnforcement? {
            let table = ProcessRecord.all(limit: limits.processesReadAtOnce)
            do throws(SessionProcesses.Refusal) {
                let processes = try SessionProcesses.signal(job.session, in: table, limit: limits.processesEndedAtOnce)
                let surviving = processes.kill(rounds: limits.sessionKillRounds, tableLimit: limits.processesReadAtOnce)
                return outcome(job, .ended(signalled: processes.signalled, killed: processes.killed, surviving: surviving))
            } catch .leaderGone {
                return outcome(job, .terminated)
            } catch {
                return outcome(job, .failed("\(error)"))
            }
        }

        private func outcome(_ job: Job, _ result: SessionEnforcement.Result) -> SessionEnforcement {
            SessionEnforcement(session: job.session.name, user: job.session.session.user, consequence: job.asked,
                               result: result, reason: job.reason, note: job.notes.isEmpty ? nil : job.notes.joined(separator: "; "))
        }

        private func report(_ outcome: SessionEnforcement) {
            switch outcome.result {
            case .failed: logger.error("session: \(outcome)")
            case .ended(_, _, let surviving) where surviving > 0: logger.error("session: \(outcome)")
            case .alreadyOver: logger.info("session: \(outcome)")
            default: logger.notice("session: \(outcome)")
            }
        }
    }
}

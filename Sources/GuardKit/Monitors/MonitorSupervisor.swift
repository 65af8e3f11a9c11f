#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit

extension MonitorKeeper {
    /// The supervising thread's state: every monitor's process, owned here alone.
    final class Supervisor {
        /// The longest wait in `poll(2)` while a monitor runs: how soon a
        /// stopped monitor is continued and an ended session's monitor stopped.
        static let tick: Duration = .milliseconds(100)
        /// The longest wait with no monitor running.
        static let idleTick: Duration = .seconds(1)
        /// How often the approvals are read again with nothing having told of a change.
        static let approvalsReread: Duration = .seconds(10)
        /// A monitor that ran at least this long before it ended starts again at once.
        static let steadyRun: Duration = .seconds(10)
        /// Restarts within this window that raise an alert, and how often one monitor's alerts may come.
        static let alertWindow: Duration = .seconds(600)
        static let alertAfter = 3
        /// How long a monitor asked to stop (`SIGTERM`) has before `SIGKILL`.
        static let stopGrace: Duration = .seconds(2)
        /// Lines of output logged per monitor: a burst of this many, then this many a second.
        static let lineBurst = 20
        static let linesPerSecond = 5
        /// A required monitor is kept down when it ends, is stopped or cannot
        /// start this many times within ``keptDownWindow``: no accident does
        /// that, a child's loop of `kill` or `kill -STOP` does it at once.
        static let keptDownAfter = 5
        static let keptDownWindow: Duration = .seconds(60)
        /// After a required monitor cost the sessions, how long before it may again.
        static let enforcedAgainAfter: Duration = .seconds(10)
        /// A session younger than this raises no "keeps ending" alert yet,
        /// and one that ends within it raises none at all.
        static let shortSession: Duration = .seconds(10)

        final class Instance {
            let key: Key
            var launch: MonitorLaunch
            var session: MonitorSession
            var uid: UInt32
            var process: UserProcess?
            var output: FileDescriptor?
            var pending: [UInt8] = []
            var snapshot: MonitorSnapshot
            var startedAt: MonotonicInstant = .now
            var restartDue: MonotonicInstant?
            var quickEndings = 0
            var starts: [MonotonicInstant] = []
            var restartTimes: [MonotonicInstant] = []
            var lastAlert: MonotonicInstant?
            /// An alert held while the session is younger than ``shortSession``.
            var pendingAlert: MonitorAlert?
            /// When a required monitor ended, was stopped or could not start,
            /// within ``keptDownWindow``.
            var downTimes: [MonotonicInstant] = []
            var lastEnforced: MonotonicInstant?
            /// Set when it is being stopped for good: SIGKILL at this instant.
            var killAt: MonotonicInstant?
            var stopReason: String?
            /// A Flatpak monitor's approved `files` folder, checked before its
            /// start; whether its sandbox was seen running it; and why it was
            /// killed as not the approved app.
            var sandboxFiles: FileIdentity?
            var sandboxShown = false
            var refusal: String?
            var lineTokens = Double(Supervisor.lineBurst)
            var lineCheck: MonotonicInstant = .now
            var droppedLines = 0

            init(key: Key, launch: MonitorLaunch, session: MonitorSession) {
                self.key = key
                self.launch = launch
                self.session = session
                uid = session.session.uid
                snapshot = MonitorSnapshot(appID: key.appID, user: key.user, session: key.session, state: .waiting, pid: 0,
                                           startedAt: .now, restarts: 0, ended: nil, restartAt: nil)
            }
        }

        let context: Context
        unowned let keeper: MonitorKeeper
        let wakeUp: CInt
        private var instances: [Key: Instance] = [:]
        /// Monitors stopped for good, waiting to end.
        private var leaving: [Instance] = []
        private var approvals: [(record: AuthorizationRecord, launch: MonitorLaunch)] = []
        private var approvalsReadAt: MonotonicInstant?
        private var launchProblems: [String: String] = [:]
        private var sessions: [MonitorSession] = []
        private var sessionsReadAt: MonotonicInstant?
        /// Set when the wake-up counter or logind's descriptor fired.
        private var woken = true
        private var noGroup: gid_t = 65534
        /// Each approved folder held open, by user and app, so that its own
        /// program runs wherever the child moves the folders above it.
        private var folders: [String: OpenedDirectory] = [:]
        /// `SIGCHLD`, which tells of a stopped monitor at once (nil: seen at the tick).
        private let childSignal = ChildSignal.open()

        init(context: Context, keeper: MonitorKeeper, wakeUp: CInt) {
            self.context = context
            self.keeper = keeper
            self.wakeUp = wakeUp
        }

        func run() {
            if let group = try? UserDatabase.group(named: "nogroup") ?? UserDatabase.group(named: "nobody") { noGroup = group.gid }
            endLeftovers()
            while !keeper.isStopping {
                reconcile()
                wait()
                service()
            }
            stopEverything()
        }

        // MARK: Reconciling

        private func reconcile() {
            let now = MonotonicInstant.now
            let configuration = context.configuration()
            if keeper.takeApprovalsChanged() || approvalsReadAt.map({ !(now < $0.advanced(by: Self.approvalsReread)) }) ?? true {
                readApprovals(configuration)
                approvalsReadAt = now
            }
            var desired: [Key: (MonitorLaunch, MonitorSession)] = [:]
            if configuration.monitorsEnabled {
                // Read again when told of a change, else once a second (a PAM
                // session's leader exiting wakes nothing): not at every tick.
                if woken || sessionsReadAt.map({ !(now < $0.advanced(by: .seconds(1))) }) ?? true {
                    sessions = context.sessions()
                    sessionsReadAt = now
                    woken = false
                }
                for (record, launch) in approvals {
                    for session in sessions where session.session.uid == record.uid && session.session.user == record.user {
                        desired[Key(user: record.user, appID: record.appID, session: session.name)] = (launch, session)
                    }
                }
            }
            for (key, instance) in instances where desired[key] == nil {
                let reason = configuration.monitorsEnabled
                    ? (approvals.contains { $0.record.user == key.user && $0.record.appID == key.appID }
                        ? "its session ended" : "its approval was lifted")
                    : "monitors are turned off ([Monitors] Enabled=no)"
                stop(instance, because: reason)
            }
            for (key, (launch, session)) in desired {
                if let instance = instances[key] {
                    guard instance.launch != launch else { continue }
                    // The app was updated: its new monitor replaces the old one.
                    stop(instance, because: "its app changed")
                }
                let instance = Instance(key: key, launch: launch, session: session)
                instances[key] = instance
                start(instance, first: true)
            }
            let due = MonotonicInstant.now
            for instance in instances.values where instance.process == nil {
                if let restart = instance.restartDue, !(due < restart) { start(instance, first: false) }
            }
            publish()
        }

        private func readApprovals(_ configuration: GuardConfiguration) {
            let records: [AuthorizationRecord]
            do throws(GuardFailure) {
                records = try context.approvals()
            } catch {
                context.logger.error("monitor: cannot read the approvals (\(error.message)); keeping the monitors as they are")
                return
            }
            var found: [(AuthorizationRecord, MonitorLaunch)] = []
            var problems: [String: String] = [:]
            var opened: [String: OpenedDirectory] = [:]
            for record in records where record.status == .approved && record.member == .child {
                let name = "\(record.user)/\(record.appID)"
                do throws(MonitorLaunchError) {
                    var folder: OpenedDirectory?
                    if record.flatpak == nil {
                        folder = approvedFolder(record, known: folders[name])
                        opened[name] = folder
                    }
                    if let launch = try MonitorLaunch.of(record, folder: folder, configuration: configuration,
                                                         logger: context.logger) { found.append((record, launch)) }
                } catch {
                    problems[name] = error.description
                    if launchProblems[name] != error.description {
                        context.logger.warning("monitor: \(record.appID) for \(record.user) declares a monitor the Guard "
                            + "cannot run: \(error)")
                        context.audit("failed", record.user, record.appID,
                                      "monitor of \(record.appID) for \(record.user) cannot be run: \(error)")
                    }
                }
            }
            launchProblems = problems
            approvals = found
            folders = opened
        }

        /// The folder `record` approved, held open: the one held already while
        /// it is still that folder, else found by its device and inode at the
        /// recorded path or beside it (never a folder put in its place).
        private func approvedFolder(_ record: AuthorizationRecord, known: OpenedDirectory?) -> OpenedDirectory? {
            guard let identity = record.appIdentity else { return known ?? (try? OpenedDirectory.open(record.appPath)) }
            if let known, known.identity == identity { return known }
            return try? OpenedDirectory.find(identity, lastSeenAt: record.appPath, under: [], user: record.user, appID: record.appID)
        }

        // MARK: Starting and stopping

        private func start(_ instance: Instance, first: Bool) {
            let key = instance.key, launch = instance.launch
            instance.restartDue = nil
            instance.snapshot.restartAt = nil
            let now = MonotonicInstant.now
            instance.starts = instance.starts.filter { now < $0.advanced(by: .seconds(60)) } + [now]
            do throws(MonitorStartError) {
                let (process, output) = try spawn(instance)
                instance.process = process
                instance.output = output
                instance.pending = []
                instance.startedAt = now
                instance.snapshot.state = .running
                instance.snapshot.pid = process.pid
                instance.snapshot.startedAt = .now
                // Known before its first instruction: `IdentifyMonitor` answers it from then on.
                publish(held: [instance.key])
                do throws(UserProcess.SpawnError) {
                    try process.release()
                } catch {
                    instance.process = nil
                    instance.output = nil
                    throw .spawn(error.description)
                }
                if first {
                    context.logger.notice("monitor: started \(key.appID) for \(key.user) in session \(key.session) "
                        + "as pid \(process.pid)")
                    context.audit("started", key.user, key.appID,
                                  "monitor of \(key.appID) for \(key.user) started in session \(key.session)")
                }
            } catch {
                context.logger.error("monitor: cannot start \(launch.appID) for \(key.user) in session \(key.session): \(error)")
                context.audit("failed", key.user, key.appID,
                              "monitor of \(key.appID) for \(key.user) could not start: \(error)")
                ended(instance, how: "could not start", startFailed: true)
            }
            writeRecord()
        }

        private func spawn(_ instance: Instance) throws(MonitorStartError) -> (UserProcess, FileDescriptor) {
            let session = instance.session.session
            guard let account = try? UserDatabase.user(named: session.user), account.uid == session.uid else {
                throw .noAccount(session.user)
            }
            let ends: (read: FileDescriptor, write: FileDescriptor)
            do throws(Errno) {
                ends = try FileDescriptor.pipe()
            } catch {
                throw .spawn("pipe: \(error)")
            }
            _ = fcntl(ends.read.rawValue, F_SETFL, fcntl(ends.read.rawValue, F_GETFL) | O_NONBLOCK)
            let launch = instance.launch
            instance.sandboxShown = false
            instance.refusal = nil
            instance.sandboxFiles = try launch.sandbox?.approvedFiles()
            // An app root's monitor: the approved folder's own program, by descriptor.
            var program: FileDescriptor?, folder: OpenedDirectory?
            if let identity = launch.folder, let relative = launch.program {
                guard let held = folders["\(instance.key.user)/\(instance.key.appID)"], held.identity == identity,
                      let opened = held.openProgram(relative) else {
                    throw .spawn("its program \(DisplayText.sanitized(relative).clipped) is no longer in the approved folder")
                }
                program = opened
                folder = held
            }
            do throws(UserProcess.SpawnError) {
                let process = try UserProcess.spawn(
                    launch.path, program: program?.rawValue, arguments: launch.arguments,
                    environment: environment(instance, account),
                    directory: launch.directory ?? account.home, directoryDescriptor: folder?.rawDescriptor,
                    uid: account.uid, gid: account.gid,
                    realGID: launch.isFlatpak || noGroup == account.gid ? account.gid : noGroup,
                    groups: UserDatabase.groupIDs(of: account), output: ends.write.rawValue)
                ends.write.close()
                return (process, ends.read)
            } catch {
                throw .spawn(error.description)
            }
        }

        /// A clean environment: the account's, the session's, and the monitor's own.
        private func environment(_ instance: Instance, _ account: UserAccount) -> [String] {
            let session = instance.session.session
            var environment = [
                "HOME=\(account.home)", "USER=\(account.name)", "LOGNAME=\(account.name)",
                "SHELL=\(account.shell.isEmpty ? "/bin/sh" : account.shell)",
                "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                "FAMILYCONTROLS_MONITOR=\(instance.key.appID)", "FAMILYCONTROLS_MONITOR_SESSION=\(instance.key.session)",
                "\(GuardEndpoint.socketVariable)=\(context.socketPath)",
            ]
            let runtime = session.runtimeDirectory ?? "/run/user/\(account.uid)"
            var info = stat()
            let hasRuntime = stat(runtime, &info) == 0 && info.st_uid == account.uid
            if hasRuntime { environment.append("XDG_RUNTIME_DIR=\(runtime)") }
            if let bus = session.bus {
                environment.append("DBUS_SESSION_BUS_ADDRESS=\(bus)")
            } else if hasRuntime, stat(runtime + "/bus", &info) == 0, info.st_mode & S_IFMT == S_IFSOCK {
                environment.append("DBUS_SESSION_BUS_ADDRESS=unix:path=\(runtime)/bus")
            }
            if let display = session.display { environment.append("DISPLAY=\(display)") }
            if let wayland = session.waylandDisplay { environment.append("WAYLAND_DISPLAY=\(wayland)") }
            if let id = session.sessionID { environment.append("XDG_SESSION_ID=\(id)") }
            return environment.filter { !$0.utf8.contains(0) }
        }

        /// Stops `instance` for good: `SIGTERM` now, `SIGKILL` after ``stopGrace``.
        private func stop(_ instance: Instance, because reason: String) {
            instances[instance.key] = nil
            let key = instance.key
            context.logger.notice("monitor: stopping \(key.appID) for \(key.user) in session \(key.session): \(reason)")
            context.audit("stopped", key.user, key.appID,
                          "monitor of \(key.appID) for \(key.user) stopped in session \(key.session): \(reason)")
            guard let process = instance.process else { return }
            process.send(SIGTERM)
            // A stopped process acts on SIGTERM only once continued.
            process.send(SIGCONT)
            instance.killAt = MonotonicInstant.now.advanced(by: Self.stopGrace)
            instance.stopReason = reason
            leaving.append(instance)
        }

        private func stopEverything() {
            for instance in Array(instances.values) { stop(instance, because: "the Guard is stopping") }
            let deadline = MonotonicInstant.now.advanced(by: Self.stopGrace)
            while !leaving.isEmpty, MonotonicInstant.now < deadline {
                SystemThread.sleep(for: .milliseconds(20))
                leaving.removeAll { instance in
                    drain(instance)
                    if case .exited? = instance.process?.poll() {}
                    return instance.process?.exit != nil
                }
            }
            for instance in leaving { instance.process?.send(SIGKILL) }
            leaving.removeAll()
            publish()
            writeRecord()
        }

        // MARK: Waiting and watching

        private func wait() {
            var descriptors = [pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
            for instance in instances.values + leaving {
                if let process = instance.process, process.exit == nil {
                    descriptors.append(pollfd(fd: process.pidfd.rawValue, events: Int16(POLLIN), revents: 0))
                }
                if let output = instance.output { descriptors.append(pollfd(fd: output.rawValue, events: Int16(POLLIN), revents: 0)) }
            }
            let childIndex = descriptors.count
            if let childSignal { descriptors.append(pollfd(fd: childSignal.descriptor.rawValue, events: Int16(POLLIN), revents: 0)) }
            let logind = context.logind
            if let logind { descriptors.append(pollfd(fd: logind.changeDescriptor, events: logind.changeEvents, revents: 0)) }
            let now = MonotonicInstant.now
            var timeout = instances.isEmpty && leaving.isEmpty ? Self.idleTick : Self.tick
            if let wanted = logind?.changeTimeout { timeout = min(timeout, .milliseconds(Int64(max(wanted, 0)))) }
            for instance in instances.values {
                if let due = instance.restartDue { timeout = min(timeout, max(now.duration(to: due), .zero)) }
            }
            let milliseconds = CInt(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            _ = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if childSignal != nil, descriptors[childIndex].revents != 0 { childSignal?.drain() }
            if descriptors[0].revents != 0 {
                var value: UInt64 = 0
                _ = read(wakeUp, &value, MemoryLayout<UInt64>.size)
                woken = true
            }
            if let logind, descriptors.last?.revents ?? 0 != 0 {
                logind.acknowledgeChange()
                woken = true
            }
        }

        private func service() {
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

        /// Whether a started Flatpak monitor's sandbox runs the approved
        /// deployment: killed, as not the approved app, when a sandbox of
        /// another shows, or none within ``FlatpakMonitorSandbox/showWithin``.
        private func checkSandbox(_ instance: Instance) {
            guard let process = instance.process, process.exit == nil, instance.refusal == nil,
                  let files = instance.sandboxFiles else { return }
            let key = instance.key
            switch FlatpakMonitorSandbox.judge(descendantsOf: process.pid, files: files) {
            case .approved:
                instance.sandboxShown = true
                context.logger.info("monitor: \(key.appID) for \(key.user) in session \(key.session) runs in a sandbox "
                    + "of the approved deployment")
                return
            case .another(let identity):
                instance.refusal = "its sandbox's /app is \(identity), not the approved deployment's files (\(files))"
            case .notSandboxed:
                guard !(MonotonicInstant.now < instance.startedAt.advanced(by: FlatpakMonitorSandbox.showWithin)) else { return }
                instance.refusal = "no sandbox of the approved deployment within \(Self.spoken(Self.seconds(FlatpakMonitorSandbox.showWithin)))"
            }
            context.logger.warning("monitor: \(key.appID) for \(key.user) in session \(key.session) is killed: "
                + (instance.refusal ?? ""))
            process.send(SIGKILL)
        }

        /// `instance` ended, not asked to: when it starts again, and the row that says so.
        ///
        /// Killed by a signal (any: the Guard signals only monitors it stops
        /// for good, so a `SIGSEGV` or `SIGABRT` may as well be the child's
        /// `kill`), or any ending of a required monitor: at once, within a
        /// generous bound of ten times `RestartsPerMinute=` a minute that only a
        /// loop reaches. Ended by itself (an exit): at once three times, then
        /// after 0.5 s, 1 s, 2 s… up to 30 s while it keeps ending within 10 s
        /// of its start, and never more than `RestartsPerMinute=` times a minute.
        private func ended(_ instance: Instance, how: String, killedBy signal: CInt? = nil, startFailed: Bool = false) {
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
        private func alertIfDue(_ instance: Instance, ended: String, delay: Duration, limited: Bool) {
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
        private func isShort(_ session: MonitorSession) -> Bool {
            UnixTime.now.seconds - session.session.openedAt.seconds < Self.seconds(Self.shortSession)
        }

        /// A required monitor ended, was stopped or could not start (`how`):
        /// past ``keptDownAfter`` times within ``keptDownWindow``, the child's
        /// sessions are locked or ended as its app declares, once (not again
        /// for ``enforcedAgainAfter``), the guardians alerted and the audit
        /// trail told.
        private func keptDown(_ instance: Instance, how: String) {
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

        /// Logs what the monitor wrote, a line at a time, within its budget.
        private func drain(_ instance: Instance) {
            guard let output = instance.output else { return }
            var buffer = [UInt8](repeating: 0, count: 16 << 10)
            var total = 0
            while total < 64 << 10 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(output.rawValue, $0.baseAddress, $0.count) }
                if count == 0 {
                    instance.output = nil
                    break
                }
                guard count > 0 else { break }
                total += count
                instance.pending += buffer[0..<count]
                while let newline = instance.pending.firstIndex(of: UInt8(ascii: "\n")) {
                    logLine(instance, Array(instance.pending[..<newline]))
                    instance.pending.removeSubrange(...newline)
                }
                if instance.pending.count > 1024 {
                    logLine(instance, Array(instance.pending.prefix(1024)))
                    instance.pending = []
                }
            }
        }

        private func logLine(_ instance: Instance, _ bytes: [UInt8]) {
            let now = MonotonicInstant.now
            instance.lineTokens = min(Double(Self.lineBurst),
                                      instance.lineTokens + Self.seconds(instance.lineCheck.duration(to: now)) * Double(Self.linesPerSecond))
            instance.lineCheck = now
            guard instance.lineTokens >= 1 else {
                instance.droppedLines += 1
                return
            }
            instance.lineTokens -= 1
            let key = instance.key
            if instance.droppedLines > 0 {
                context.logger.notice("monitor \(key.appID) for \(key.user): \(instance.droppedLines) lines not logged (too many)")
                instance.droppedLines = 0
            }
            let text = DisplayText.sanitized(String(decoding: bytes, as: UTF8.self), limit: 512)
            context.logger.info("monitor \(key.appID) for \(key.user): \(text)")
        }

        // MARK: The table others read, and the record on disk

        private func publish(held: Set<Key> = []) {
            var table: [Key: MonitorSnapshot] = [:], owners: [Key: Owner] = [:]
            for (key, instance) in instances {
                table[key] = instance.snapshot
                owners[key] = Owner(uid: instance.uid, sandboxFiles: instance.sandboxFiles)
            }
            keeper.publish(table, owners: owners, held: held)
        }

        /// Writes the running monitors' pids and start times, so that the next
        /// Guard ends those this one leaves behind if it crashes.
        private func writeRecord() {
            guard let path = context.recordPath else { return }
            var text = (Self.bootID() ?? "-") + "\n"
            for instance in instances.values + leaving {
                guard let process = instance.process, process.exit == nil,
                      let started = LoginSessions.startTime(of: process.pid) else { continue }
                text += "\(process.pid) \(started) \(instance.uid)\n"
            }
            do throws(Errno) {
                try FileDescriptor.replaceFile(path, with: Array(text.utf8), mode: 0o600)
            } catch {
                context.logger.warning("monitor: cannot write \(path): \(error)")
            }
        }

        /// Ends the monitors a Guard before this one left running: each one
        /// still the same process (its start time) of the same user.
        private func endLeftovers() {
            guard let path = context.recordPath,
                  let bytes = try? FileDescriptor.readFile(path, limit: 1 << 20) else { return }
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            // Under ProcSubset=pid there is no boot id to read ("-"): the start
            // time and the owner below still tell a recycled pid apart.
            guard let boot = lines.first, boot == Self.bootID() ?? "-" else { return }
            var ended = 0
            for line in lines.dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count == 3, let pid = pid_t(fields[0]), pid > 1, let started = UInt64(fields[1]),
                      let uid = UInt32(fields[2]), uid != 0 else { continue }
                guard let handle = ProcessHandle.open(pid: pid), LoginSessions.startTime(of: pid) == started,
                      Self.owner(of: pid) == uid else { continue }
                _ = ProcessHandle.send(SIGKILL, to: handle.rawValue)
                ended += 1
            }
            if ended > 0 {
                context.logger.notice("monitor: ended \(ended) monitor(s) an earlier Guard left running; starting them afresh")
            }
        }

        private static func bootID() -> String? {
            guard let bytes = try? FileDescriptor.readFile("/proc/sys/kernel/random/boot_id", limit: 64) else { return nil }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
        }

        /// The real uid `/proc/PID/status` names (a monitor is not dumpable,
        /// so `/proc/PID` itself belongs to root).
        private static func owner(of pid: pid_t) -> UInt32? {
            guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/status", limit: 1 << 16) else { return nil }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Uid:") {
                return line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " }).first.flatMap { UInt32($0) }
            }
            return nil
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        static func spoken(_ seconds: Double) -> String {
            seconds < 10 ? "\((seconds * 10).rounded() / 10) s" : "\(Int(seconds.rounded())) s"
        }
    }
}

/// Why a monitor could not be started.
enum MonitorStartError: Error, CustomStringConvertible {
    case noAccount(String)
    case spawn(String)
    /// A Flatpak monitor that would not run, or does not run, the approved deployment.
    case notApproved(String)

    var description: String {
        switch self {
        case .noAccount(let user): "the user directory has no account \(DisplayText.sanitized(user).clipped) with the session's uid"
        case .spawn(let message): message
        case .notApproved(let reason): "it is not the approved app: \(reason)"
        }
    }
}

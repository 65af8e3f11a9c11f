#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit
import GuardStore

extension MonitorKeeper {
    /// The supervising thread's state: every monitor's process, owned here alone.
    final class Supervisor {
        /// How often a look is taken while something has no event of its own
        /// to wake the thread: a stop where `SIGCHLD` cannot be watched, a
        /// Flatpak monitor's sandbox being set up.
        static let look: Duration = .milliseconds(100)
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
        var instances: [Key: Instance] = [:]
        /// Monitors stopped for good, waiting to end.
        var leaving: [Instance] = []
        var approvals: [(record: AuthorizationRecord, launch: MonitorLaunch)] = []
        /// When the approvals are read again with nothing having told of a
        /// change: only while a child's app is approved (its files can change
        /// under it) or the last reading failed. With none approved, only a
        /// change the Guard makes, which wakes this thread, can bring one:
        /// the thread sleeps until then.
        var approvalsRereadAt: MonotonicInstant?
        var launchProblems: [String: String] = [:]
        var sessions: [MonitorSession] = []
        var sessionsReadAt: MonotonicInstant?
        /// Set when the wake-up counter or logind's descriptor fired.
        var woken = true
        var noGroup: gid_t = 65534
        /// Each approved folder held open, by user and app, so that its own
        /// program runs wherever the child moves the folders above it.
        var folders: [String: OpenedDirectory] = [:]
        /// `SIGCHLD`, which tells of a stopped monitor at once (nil: seen at a look every ``look``).
        let childSignal = ChildSignal.open()
        /// A pidfd of each session's leader, by session name: its exit ends a
        /// PAM session, which nothing else tells.
        var leaders: [String: FileDescriptor] = [:]

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

        func reconcile() {
            let now = MonotonicInstant.now
            let configuration = context.configuration()
            // The keeper starts out changed, so the first pass reads them.
            if keeper.takeApprovalsChanged() || approvalsRereadAt.map({ !(now < $0) }) ?? false {
                approvalsRereadAt = readApprovals(configuration) ? now.advanced(by: Self.approvalsReread) : nil
            }
            var desired: [Key: (MonitorLaunch, MonitorSession)] = [:]
            if configuration.monitorsEnabled {
                // Read again when told of a change: a session opened or closed,
                // logind's descriptor, a session's leader exiting.
                if woken || sessionsReadAt == nil {
                    sessions = context.sessions()
                    sessionsReadAt = now
                    woken = false
                    watchLeaders()
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

        /// Reads the approved child apps and their monitors; returns whether
        /// to read them again on the clock (one is approved, or reading failed).
        func readApprovals(_ configuration: GuardConfiguration) -> Bool {
            let records: [AuthorizationRecord]
            do throws(GuardFailure) {
                records = try context.approvals()
            } catch {
                context.logger.error("monitor: cannot read the approvals (\(error.message)); keeping the monitors as they are")
                return true
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
            return records.contains { $0.status == .approved && $0.member == .child }
        }

        /// The folder `record` approved, held open: the one held already while
        /// it is still that folder, else found by its device and inode at the
        /// recorded path or beside it (never a folder put in its place).
        func approvedFolder(_ record: AuthorizationRecord, known: OpenedDirectory?) -> OpenedDirectory? {
            guard let identity = record.appIdentity else { return known ?? (try? OpenedDirectory.open(record.appPath)) }
            if let known, known.identity == identity { return known }
            return try? OpenedDirectory.find(identity, lastSeenAt: record.appPath, under: [], user: record.user, appID: record.appID)
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

#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit
import Varlink
import VarlinkServerKit
import GuardSessions
import GuardStore
import GuardTime

/// `OpenSession`, `CloseSession` and `ListSessions`: the login sessions the
/// PAM session module (`pam_familycontrols.so`) tells the Guard of. Root only:
/// the module runs in the root process that opens the session (login, sshd,
/// su), and that process's life is the session's.
extension GuardService {
    func openSession(_ parameters: Guard.OpenSession.Parameters, _ served: ServedCall) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            let peer = served.connection.peer
            try Self.checkToken(parameters.token)
            for (name, value) in [("service", parameters.service), ("tty", parameters.tty), ("runtimeDirectory", parameters.runtimeDirectory),
                                  ("display", parameters.display), ("waylandDisplay", parameters.waylandDisplay),
                                  ("bus", parameters.bus), ("sessionID", parameters.sessionID)] {
                guard let value else { continue }
                guard value.utf8.count <= Self.sessionValueLimit else {
                    throw GuardFailure(.familyControls(.invalidArgument), "\(name) is over \(Self.sessionValueLimit) bytes")
                }
            }
            let found: UserAccount?
            do throws(Errno) {
                found = try UserDatabase.user(named: parameters.user)
            } catch {
                throw GuardFailure(.networkError, "the user directory could not be reached: \(error)")
            }
            guard let account = found else {
                throw GuardFailure(.notFound, "no user \(DisplayText.sanitized(parameters.user).clipped)")
            }
            let opened = peer.pidfd == nil ? ProcessHandle.open(pid: peer.pid) : nil
            guard let pidfd = peer.pidfd?.rawValue ?? opened?.rawValue else {
                throw GuardFailure(.unavailable, "the process that opened the session is gone")
            }
            // `su` run by the user: root's effective uid, the user's real one.
            let nested = Self.realUID(of: peer.pid) == account.uid
            let session = LoginSession(user: account.name, uid: account.uid, service: parameters.service, tty: parameters.tty,
                                       runtimeDirectory: parameters.runtimeDirectory, display: parameters.display,
                                       waylandDisplay: parameters.waylandDisplay, bus: parameters.bus,
                                       sessionID: parameters.sessionID, leader: peer.pid, openedAt: .now, nested: nested)
            do throws(LoginSessionRefusal) {
                if let forgotten = try sessions.open(session, token: parameters.token, pidfd: pidfd) {
                    let bound = nested ? "\(sessions.nestedPerUser) sessions opened from their own" : "\(sessions.perUser) logins"
                    logger.warning("session: \(account.name) has \(bound) open; their oldest is forgotten (\(Self.describe(forgotten)))")
                }
            } catch {
                logger.warning("session: \(account.name) not recorded: \(error)")
                throw GuardFailure(.limitReached, "the session is not recorded: \(error)")
            }
            logger.info("session: \(account.name) opened (\(Self.describe(session)))")
            sessionsChanged()
            return Guard.OpenSession.Reply().object
        }
    }

    func closeSession(_ parameters: Guard.CloseSession.Parameters, _ served: ServedCall) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            let peer = served.connection.peer
            try Self.checkToken(parameters.token)
            guard let session = sessions.close(token: parameters.token, from: peer.pid) else {
                throw GuardFailure(.notFound, "no session of this process is open under that token")
            }
            logger.info("session: \(session.user) closed (\(Self.describe(session)))")
            sessionsChanged()
            return Guard.CloseSession.Reply().object
        }
    }

    func listSessions(_ parameters: Guard.ListSessions.Parameters, _ served: ServedCall) {
        respond(served.call, on: served.connection) { () throws(GuardFailure) -> JSONObject in
            let (open, ended) = sessions.current()
            for session in ended { logger.info("session: \(session.user) ended: its leader is gone (\(Self.describe(session)))") }
            return Guard.ListSessions.Reply(sessions: open.map { session in
                Guard.Session(user: session.user, uid: Int64(session.uid), service: session.service, tty: session.tty,
                              leader: Int64(session.leader), openedAt: Int64(session.openedAt.seconds))
            }).object
        }
    }

    /// A session opened or closed: the monitors and the time keeper look again now.
    func sessionsChanged() {
        monitors.wake()
        time.wake()
    }

    /// The sessions the monitors run in now; those found ended are logged.
    package func monitorSessions(logind: LogindSessions?) -> [MonitorSession] {
        let (open, ended) = sessions.current()
        for session in ended { logger.info("session: \(session.user) ended: its leader is gone (\(Self.describe(session)))") }
        let (fromLogind, known) = logind?.currentAndKnown() ?? ([], [])
        return MonitorSessions.merge(logind: fromLogind, known: known, pam: open)
    }

    /// Starts the monitors' keeper: sessions from ``sessions``, approvals
    /// from the ledger, told of every change of either; `enforcer` locks or
    /// ends a child's sessions when a required monitor is kept down.
    /// - Returns: logind's sessions, when logind runs and they can be read.
    @discardableResult
    package func startMonitors(socketPath: String, stateDirectory: String, enforcer: any SessionEnforcing) throws(Errno)
        -> LogindSessions? {
        Self.removeTextRecords(in: stateDirectory, logger: logger)
        let restored = sessions.keepRecord(in: policy.ledger.store, logger: logger)
        if restored > 0 { logger.notice("session: \(restored) session(s) still open since the Guard last ran") }
        var opened: LogindSessions?
        if LogindSessions.isRunning() {
            do throws(LogindFailure) {
                opened = try LogindSessions.open()
                logger.notice("session: reading systemd-logind's sessions, and the PAM session module's that logind does not know")
            } catch {
                logger.warning("session: systemd-logind runs but its sessions cannot be read (\(error)); "
                    + "only the PAM session module's sessions run monitors")
            }
        }
        let logind = opened, ledger = policy.ledger, families = policy.families, monitors = monitors
        ledger.whenChanged { monitors.approvalsChanged() }
        try monitors.start(MonitorKeeper.Context(
            sessions: { [self] in monitorSessions(logind: logind) },
            logind: logind,
            approvals: { () throws(GuardFailure) in try ledger.authorizations() },
            configuration: { families.current.configuration },
            enforcer: enforcer,
            audit: { outcome, user, appID, detail in
                ledger.audit(.monitor, actor: AuditEvent.guardActor, user: user, appID: appID, member: .child,
                             outcome: outcome, detail: detail)
            },
            socketPath: socketPath, record: ledger.store, logger: logger))
        return logind
    }

    /// Removes the text files a Guard before store schema 11 kept its
    /// sessions and monitors in; the store keeps them now.
    private static func removeTextRecords(in stateDirectory: String, logger: Logger) {
        for name in ["sessions", "monitors"] where unlink(stateDirectory + "/" + name) == 0 {
            logger.notice("session: removed \(stateDirectory)/\(name), kept by an earlier version; the store keeps it now")
        }
    }

    /// The real uid `/proc/PID/status` names (the first number of `Uid:`).
    private static func realUID(of pid: Int32) -> UInt32? {
        guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/status", limit: 1 << 16) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("Uid:") {
            return line.dropFirst(4).split(whereSeparator: { $0 == "\t" || $0 == " " }).first.flatMap { UInt32($0) }
        }
        return nil
    }

    /// How long a session's service, tty or environment value may be.
    static let sessionValueLimit = 1024

    /// A token is the module's: 32 lowercase hexadecimal digits.
    private static func checkToken(_ token: String) throws(GuardFailure) {
        guard token.utf8.count == 32, token.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw GuardFailure(.familyControls(.invalidArgument), "token must be 32 lowercase hexadecimal digits")
        }
    }

    private static func describe(_ session: LoginSession) -> String {
        "service \(DisplayText.sanitized(session.service)), tty \(DisplayText.sanitized(session.tty ?? "none")), "
            + "leader pid \(session.leader)" + (session.nested ? ", opened from their own session" : "")
    }
}

#if canImport(Glibc)
import Glibc
#endif
import GuardStore
import Synchronization
import SystemKit

/// One login session, as the PAM session module told it (`OpenSession`).
package struct LoginSession: Sendable, Equatable {
    package var user: String
    package var uid: UInt32
    /// PAM's service and tty: `login`, `sshd`, `su-l`, `gdm-password`…
    package var service: String
    package var tty: String?
    /// The session's environment as PAM held it, each only when set.
    package var runtimeDirectory: String?
    package var display: String?
    package var waylandDisplay: String?
    package var bus: String?
    package var sessionID: String?
    /// The process that opened it (login, sshd's session process, su): the
    /// session lasts while it lives.
    package var leader: pid_t
    package var openedAt: UnixTime
    /// Opened by the user from inside a session of their own: the leader's
    /// real uid is the user's (`su` or `sudo` to themself, run by them),
    /// where a login's leader (`login`, sshd, a display manager, `runuser`)
    /// is root's or another user's.
    package var nested: Bool = false

    package init(user: String, uid: UInt32, service: String, tty: String? = nil, runtimeDirectory: String? = nil,
                 display: String? = nil, waylandDisplay: String? = nil, bus: String? = nil, sessionID: String? = nil,
                 leader: pid_t, openedAt: UnixTime, nested: Bool = false) {
        self.user = user
        self.uid = uid
        self.service = service
        self.tty = tty
        self.runtimeDirectory = runtimeDirectory
        self.display = display
        self.waylandDisplay = waylandDisplay
        self.bus = bus
        self.sessionID = sessionID
        self.leader = leader
        self.openedAt = openedAt
        self.nested = nested
    }
}

/// The login sessions the Guard knows of, in memory and, once
/// ``keepRecord(in:logger:)`` names the store, recorded there after every
/// change so that a Guard started again knows the sessions still open (each
/// one's leader still the same process, by its start time).
///
/// A session is ended by `CloseSession` with its token, or when the process
/// that opened it is gone (checked through a pidfd taken when it opened, so a
/// recycled pid is never taken for it).
package final class LoginSessions: Sendable {
    private struct Entry {
        var session: LoginSession
        /// A pidfd of the leader, owned here.
        var leader: CInt
    }

    /// The most sessions kept; past it an `OpenSession` is refused (a login
    /// still succeeds: the module never fails one).
    package let limit: Int
    /// The most logins of one user kept (sessions root opened for them), so
    /// that one user cannot fill the table for everyone; past it the user's
    /// oldest login is forgotten, never the newest refused.
    package let perUser: Int
    /// The most ``LoginSession/nested`` sessions of one user kept, apart from
    /// their logins: past it their oldest nested session is forgotten, so
    /// that sessions a child opens from inside their own (`su` to themself,
    /// in a loop) never crowd out a login.
    package let nestedPerUser: Int
    private let entries = Mutex<[String: Entry]>([:])
    private let record = Mutex<(store: Store, logger: Logger)?>(nil)

    package init(limit: Int = 4096, perUser: Int = 64, nestedPerUser: Int = 16) {
        self.limit = limit
        self.perUser = perUser
        self.nestedPerUser = nestedPerUser
    }

    deinit {
        entries.withLock { all in for entry in all.values { _ = Glibc.close(entry.leader) } }
    }

    /// Records `session` under `token`, its leader pinned by a duplicate of
    /// `pidfd`. A user at their bound (``perUser`` logins, or
    /// ``nestedPerUser`` nested sessions) has their oldest session of the
    /// same kind forgotten to make room.
    /// - Returns: the session forgotten to make room, if one was.
    /// - Throws: ``LoginSessionRefusal`` for a token already open, a full
    ///   table, or a leader that is gone.
    @discardableResult
    package func open(_ session: LoginSession, token: String, pidfd: CInt) throws(LoginSessionRefusal) -> LoginSession? {
        guard ProcessHandle.isAlive(pidfd: pidfd) else { throw .leaderGone }
        let pinned = fcntl(pidfd, F_DUPFD_CLOEXEC, 3)
        guard pinned >= 0 else { throw .leaderGone }
        let outcome: Result<LoginSession?, LoginSessionRefusal> = entries.withLock { all in
            Self.prune(&all)
            guard all[token] == nil else { return .failure(.tokenInUse) }
            let bound = session.nested ? nestedPerUser : perUser
            let same = all.filter { $0.value.session.uid == session.uid && $0.value.session.nested == session.nested }
            var forgotten: LoginSession?
            if same.count >= bound, let oldest = same.min(by: { Self.older($0.value.session, $1.value.session) }) {
                forgotten = oldest.value.session
                _ = Glibc.close(oldest.value.leader)
                all[oldest.key] = nil
            }
            guard all.count < limit else { return .failure(.full(limit)) }
            all[token] = Entry(session: session, leader: pinned)
            write(all)
            return .success(forgotten)
        }
        switch outcome {
        case .success(let forgotten): return forgotten
        case .failure(let refusal):
            _ = Glibc.close(pinned)
            throw refusal
        }
    }

    private static func older(_ first: LoginSession, _ second: LoginSession) -> Bool {
        (first.openedAt, first.leader) < (second.openedAt, second.leader)
    }

    /// Ends the session `token` names, told by its own leader (`leader`, the
    /// caller's pid): a token is not enough, so one root process cannot end
    /// another's session by guessing.
    /// - Returns: the session ended, or nil when none was open under it.
    package func close(token: String, from leader: pid_t) -> LoginSession? {
        entries.withLock { all in
            guard let entry = all[token], entry.session.leader == leader else { return nil }
            all[token] = nil
            _ = Glibc.close(entry.leader)
            write(all)
            return entry.session
        }
    }

    /// The sessions open now, oldest first; those whose leader is gone are
    /// forgotten first and returned as `ended`.
    package func current() -> (open: [LoginSession], ended: [LoginSession]) {
        entries.withLock { all in
            let ended = Self.prune(&all)
            if !ended.isEmpty { write(all) }
            let open = all.values.map(\.session).sorted { ($0.openedAt, $0.leader) < ($1.openedAt, $1.leader) }
            return (open, ended)
        }
    }

    /// Reads the sessions `store` holds (a Guard before this one recorded
    /// them), keeps those whose leader is still the same process, and from
    /// then on records every change there.
    /// - Returns: how many sessions were taken up again.
    @discardableResult
    package func keepRecord(in store: Store, logger: Logger) -> Int {
        var restored = 0
        let recorded: [StoredLoginSession]
        var readable = true
        do throws(StoreError) {
            recorded = try store.loginSessions()
        } catch {
            logger.warning("session: cannot read the recorded sessions: \(error); taking up none, and leaving the record "
                + "as it is until a session opens or closes")
            recorded = []
            readable = false
        }
        for stored in recorded {
            let session = LoginSession(user: stored.user, uid: stored.uid, service: stored.service, tty: stored.tty,
                                       runtimeDirectory: stored.runtimeDirectory, display: stored.display,
                                       waylandDisplay: stored.waylandDisplay, bus: stored.bus, sessionID: stored.sessionID,
                                       leader: stored.leader, openedAt: UnixTime(seconds: stored.openedAt), nested: stored.nested)
            guard let pidfd = ProcessHandle.open(pid: session.leader),
                  Self.startTime(of: session.leader) == stored.leaderStarted else { continue }
            do throws(LoginSessionRefusal) {
                try open(session, token: stored.token, pidfd: pidfd.rawValue)
                restored += 1
            } catch {
                continue
            }
        }
        record.withLock { $0 = (store, logger) }
        // The record is what was taken up; one that could not be read is not wiped for nothing.
        if readable { entries.withLock { write($0) } }
        return restored
    }

    /// Records every session, its token and its leader's start time.
    private func write(_ all: [String: Entry]) {
        guard let (store, logger) = record.withLock({ $0 }) else { return }
        let sessions = all.sorted(by: { $0.key < $1.key }).compactMap { token, entry -> StoredLoginSession? in
            guard let started = Self.startTime(of: entry.session.leader) else { return nil }
            let session = entry.session
            return StoredLoginSession(token: token, user: session.user, uid: session.uid, service: session.service,
                                      tty: session.tty, runtimeDirectory: session.runtimeDirectory, display: session.display,
                                      waylandDisplay: session.waylandDisplay, bus: session.bus, sessionID: session.sessionID,
                                      leader: session.leader, leaderStarted: started, openedAt: session.openedAt.seconds,
                                      nested: session.nested)
        }
        do throws(StoreError) {
            try store.replaceLoginSessions(sessions)
        } catch {
            logger.warning("session: cannot record the sessions: \(error); a restarted Guard will not know today's sessions")
        }
    }

    /// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks since boot.
    static func startTime(of pid: pid_t) -> UInt64? {
        guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/stat", limit: 4096),
              let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    /// Drops the sessions whose leader has exited.
    @discardableResult
    private static func prune(_ all: inout [String: Entry]) -> [LoginSession] {
        var ended: [LoginSession] = []
        for (token, entry) in all where hasExited(entry.leader) {
            ended.append(entry.session)
            _ = Glibc.close(entry.leader)
            all[token] = nil
        }
        return ended
    }

    /// A pidfd is readable once its process has exited, reaped or not
    /// (a leader its parent has not waited for yet counts as ended).
    private static func hasExited(_ pidfd: CInt) -> Bool {
        var pollfd = Glibc.pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&pollfd, 1, 0) == 1 && pollfd.revents & Int16(POLLIN) != 0
    }
}

/// Why an `OpenSession` was not recorded.
package enum LoginSessionRefusal: Error, Equatable, CustomStringConvertible {
    case tokenInUse
    case full(Int)
    case leaderGone

    package var description: String {
        switch self {
        case .tokenInUse: "a session is already open under that token"
        case .full(let limit): "\(limit) sessions are open already"
        case .leaderGone: "the process that opened the session is gone"
        }
    }
}

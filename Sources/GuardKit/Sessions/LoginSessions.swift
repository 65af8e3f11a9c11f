#if canImport(Glibc)
import Glibc
#endif
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
}

/// The login sessions the Guard knows of, in memory only: a restart forgets
/// them (each login tells the next Guard again).
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
    /// The most one user's sessions kept, so that a child who opens sessions
    /// of their own (`su` to themself) cannot fill the table for everyone.
    package let perUser: Int
    private let entries = Mutex<[String: Entry]>([:])

    package init(limit: Int = 4096, perUser: Int = 64) {
        self.limit = limit
        self.perUser = perUser
    }

    deinit {
        entries.withLock { all in for entry in all.values { _ = Glibc.close(entry.leader) } }
    }

    /// Records `session` under `token`, its leader pinned by a duplicate of `pidfd`.
    /// - Throws: ``LoginSessionRefusal`` for a token already open, a full
    ///   table, or a leader that is gone.
    package func open(_ session: LoginSession, token: String, pidfd: CInt) throws(LoginSessionRefusal) {
        guard ProcessHandle.isAlive(pidfd: pidfd) else { throw .leaderGone }
        let pinned = fcntl(pidfd, F_DUPFD_CLOEXEC, 3)
        guard pinned >= 0 else { throw .leaderGone }
        let refusal: LoginSessionRefusal? = entries.withLock { all in
            Self.prune(&all)
            guard all[token] == nil else { return .tokenInUse }
            guard all.count < limit else { return .full(limit) }
            guard all.values.count(where: { $0.session.uid == session.uid }) < perUser else {
                return .fullForUser(perUser)
            }
            all[token] = Entry(session: session, leader: pinned)
            return nil
        }
        if let refusal {
            _ = Glibc.close(pinned)
            throw refusal
        }
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
            return entry.session
        }
    }

    /// The sessions open now, oldest first; those whose leader is gone are
    /// forgotten first and returned as `ended`.
    package func current() -> (open: [LoginSession], ended: [LoginSession]) {
        entries.withLock { all in
            let ended = Self.prune(&all)
            let open = all.values.map(\.session).sorted { ($0.openedAt, $0.leader) < ($1.openedAt, $1.leader) }
            return (open, ended)
        }
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
    case fullForUser(Int)
    case leaderGone

    package var description: String {
        switch self {
        case .tokenInUse: "a session is already open under that token"
        case .full(let limit): "\(limit) sessions are open already"
        case .fullForUser(let limit): "the user has \(limit) sessions open already"
        case .leaderGone: "the process that opened the session is gone"
        }
    }
}

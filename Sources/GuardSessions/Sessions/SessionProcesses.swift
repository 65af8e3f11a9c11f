#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The processes of one login session that logind does not hold (the PAM
/// module's, whose only handle is the pid of the process that opened it),
/// ended by signals: found in `/proc`, each pinned by a pidfd before it is
/// signalled, so that a pid recycled meanwhile is never signalled.
///
/// Which processes are the session's, without a cgroup to say so:
/// - its leader (the process that opened it: `login`, `su`, `runuser`,
///   sshd's session process), and only while it is the very process that
///   opened the session: started no later than the session opened, run by
///   root or by the session's user, never pid 1 or the Guard;
/// - every process wholly the user's (real, effective and saved uid) that is
///   in the leader's kernel session or in the kernel session of any
///   descendant of the leader (`su -c` and `login` start the shell in a
///   session of its own, `setsid` another), or is itself a descendant.
///
/// Never a process of root or of another user other than the leader, nor
/// one in the init's session. A process the child moved out of the tree
/// (`setsid` and a double fork, then the parent gone) is out of reach: only
/// logind's cgroups hold every process of a session.
///
/// The leader gets `SIGTERM`, which `login`, `su`, `runuser` and sshd handle
/// by ending what they opened (they signal their shell and close the PAM
/// session, so the Guard hears `CloseSession`); `SIGHUP`, a hangup, would
/// end some of them at once without that. The user's processes get
/// `SIGHUP` (a shell ignores `SIGTERM`, not a hangup), `SIGTERM` and
/// `SIGCONT` (a stopped process acts on neither until continued). After the
/// grace period, whatever is left, the leader included, gets `SIGKILL`, in
/// rounds that look again for processes forked meanwhile.
///
/// Not thread-safe: one owner, the ``SessionEnforcer``'s thread.
final class SessionProcesses {
    /// A process found and pinned.
    private struct Pinned {
        var record: ProcessRecord
        var pidfd: FileDescriptor
    }

    /// Why nothing could be signalled.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// No leader pid is known (a logind session on a libsystemd that does not report it).
        case leaderUnknown
        /// The leader has exited, or its pid now names a process that started after the session opened.
        case leaderGone
        /// The leader is pid 1, the Guard, or a process of a user other than root and the session's.
        case leaderNotTheSessions

        var description: String {
            switch self {
            case .leaderUnknown: "the process that opened the session is not known"
            case .leaderGone: "the process that opened the session is gone"
            case .leaderNotTheSessions: "the process named as the session's leader is not one the Guard may signal"
            }
        }
    }

    let session: MonitorSession
    private let limit: Int
    private var leader: Pinned?
    private var sessionIDs: Set<pid_t> = []
    private var pinned: [pid_t: Pinned] = [:]
    /// Processes signalled in all, the leader included.
    private(set) var signalled = 0
    /// Processes that needed `SIGKILL`.
    private(set) var killed = 0
    /// Processes found beyond `limit`, left alone.
    private(set) var overLimit = 0

    private init(session: MonitorSession, limit: Int) {
        self.session = session
        self.limit = limit
    }

    /// Finds the session's processes in `table` (``ProcessRecord/all(limit:)``),
    /// pins them, and sends each its first signals.
    /// - Throws: ``Refusal`` when the leader cannot be trusted to name the session.
    static func signal(_ session: MonitorSession, in table: [pid_t: ProcessRecord],
                       limit: Int) throws(Refusal) -> SessionProcesses {
        let ending = SessionProcesses(session: session, limit: limit)
        try ending.pinLeader(in: table)
        for record in ending.members(of: table) { ending.pin(record) }
        if let leader = ending.leader, ProcessHandle.send(SIGTERM, to: leader.pidfd.rawValue) { ending.signalled += 1 }
        for process in ending.pinned.values {
            let sent = ProcessHandle.send(SIGHUP, to: process.pidfd.rawValue)
            let terminated = ProcessHandle.send(SIGTERM, to: process.pidfd.rawValue)
            ProcessHandle.send(SIGCONT, to: process.pidfd.rawValue)
            if sent || terminated { ending.signalled += 1 }
        }
        return ending
    }

    /// The pidfds of everything signalled that has not exited.
    var waiting: [CInt] {
        (pinned.values.map(\.pidfd.rawValue) + (leader.map { [$0.pidfd.rawValue] } ?? []))
            .filter { !ProcessHandle.hasExited(pidfd: $0) }
    }

    /// Kills what is left: the leader and every process pinned, then, in up
    /// to `rounds` rounds, the session's processes found again in `/proc`.
    /// - Returns: how many processes of the session still run.
    func kill(rounds: Int, tableLimit: Int) -> Int {
        if let leader, !ProcessHandle.hasExited(pidfd: leader.pidfd.rawValue),
           ProcessHandle.send(SIGKILL, to: leader.pidfd.rawValue) {
            killed += 1
        }
        for _ in 0..<max(rounds, 1) {
            let table = ProcessRecord.all(limit: tableLimit)
            for record in members(of: table) where pinned[record.pid]?.record.startTicks != record.startTicks {
                pin(record)
            }
            let alive = pinned.values.filter { !ProcessHandle.hasExited(pidfd: $0.pidfd.rawValue) }
            if alive.isEmpty { return 0 }
            for process in alive where ProcessHandle.send(SIGKILL, to: process.pidfd.rawValue) { killed += 1 }
            _ = ProcessHandle.waitUntilExited(alive.map(\.pidfd.rawValue), until: .now + .milliseconds(200))
        }
        return pinned.values.count { !ProcessHandle.hasExited(pidfd: $0.pidfd.rawValue) }
    }

    /// Pins the leader, and takes its kernel session as the session's.
    private func pinLeader(in table: [pid_t: ProcessRecord]) throws(Refusal) {
        let pid = session.session.leader
        guard pid > 0 else { throw .leaderUnknown }
        guard pid != 1, pid != getpid() else { throw .leaderNotTheSessions }
        guard let record = table[pid] ?? ProcessRecord.read(pid) else { throw .leaderGone }
        guard record.isWholly(0) || record.isWholly(session.session.uid) else { throw .leaderNotTheSessions }
        // A process that started after the session opened is not the one
        // that opened it (its pid was recycled); the slack covers the
        // clock's ticks and the rounding of the boot time.
        guard record.startedAt.seconds <= session.session.openedAt.seconds + 2 else { throw .leaderGone }
        guard let pidfd = Self.open(record) else { throw .leaderGone }
        leader = Pinned(record: record, pidfd: pidfd)
        if record.session > 1, record.session != getsid(0) { sessionIDs.insert(record.session) }
    }

    /// The user's processes of the session in `table`: descendants of the
    /// leader, and those in a kernel session the leader or a descendant is
    /// in (the sessions seen are kept, so a process the leader's exit
    /// orphaned is still found in a later round).
    private func members(of table: [pid_t: ProcessRecord]) -> [ProcessRecord] {
        guard let leader else { return [] }
        var children: [pid_t: [pid_t]] = [:]
        for record in table.values { children[record.parent, default: []].append(record.pid) }
        var descendants: Set<pid_t> = []
        var next = [leader.record.pid] + pinned.keys
        while let pid = next.popLast(), descendants.count < table.count {
            for child in children[pid] ?? [] where descendants.insert(child).inserted { next.append(child) }
        }
        let own = getsid(0)
        for pid in descendants {
            if let session = table[pid]?.session, session > 1, session != own { sessionIDs.insert(session) }
        }
        let uid = session.session.uid
        return table.values.filter { record in
            record.pid != leader.record.pid && record.pid != getpid() && record.isWholly(uid)
                && (descendants.contains(record.pid) || sessionIDs.contains(record.session))
        }
    }

    /// Pins `record`'s process, if it is still that very process.
    private func pin(_ record: ProcessRecord) {
        guard pinned.count < limit else {
            overLimit += 1
            return
        }
        guard let pidfd = Self.open(record) else { return }
        pinned[record.pid] = Pinned(record: record, pidfd: pidfd)
    }

    /// A pidfd for `record`'s process, checked after it was opened to be
    /// that process still (same start, same uids): a pid recycled between the
    /// read and `pidfd_open` is refused.
    private static func open(_ record: ProcessRecord) -> FileDescriptor? {
        guard let pidfd = ProcessHandle.open(pid: record.pid) else { return nil }
        guard let again = ProcessRecord.read(record.pid), again.startTicks == record.startTicks,
              again.uids == record.uids else { return nil }
        return pidfd
    }
}

import SQLite

/// A login session as the store keeps it for a Guard started again: the
/// PAM module's session, its token, and its leader's start time (so a
/// recycled pid is never taken for the leader).
package struct StoredLoginSession: Sendable, Equatable {
    package var token: String
    package var user: String
    package var uid: UInt32
    package var service: String
    package var tty: String?
    package var runtimeDirectory: String?
    package var display: String?
    package var waylandDisplay: String?
    package var bus: String?
    package var sessionID: String?
    package var leader: Int32
    package var leaderStarted: UInt64
    package var openedAt: Double
    package var nested: Bool

    package init(token: String, user: String, uid: UInt32, service: String, tty: String?, runtimeDirectory: String?,
                 display: String?, waylandDisplay: String?, bus: String?, sessionID: String?, leader: Int32,
                 leaderStarted: UInt64, openedAt: Double, nested: Bool) {
        self.token = token
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
        self.leaderStarted = leaderStarted
        self.openedAt = openedAt
        self.nested = nested
    }
}

/// A monitor's process as the store keeps it: a Guard that crashed leaves it
/// running, and the next one ends it if it is still the same process.
package struct StoredMonitorProcess: Sendable, Equatable {
    package var pid: Int32
    package var started: UInt64
    package var uid: UInt32

    package init(pid: Int32, started: UInt64, uid: UInt32) {
        self.pid = pid
        self.started = started
        self.uid = uid
    }
}

extension Store {
    private static let sessionColumns = """
        token, user, uid, service, tty, runtime_directory, display, wayland_display, bus, session_id,
        leader, leader_started, opened_at, nested
        """

    /// Replaces every recorded login session with `sessions`, in one transaction.
    package func replaceLoginSessions(_ sessions: [StoredLoginSession]) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.execute("DELETE FROM login_sessions")
                for session in sessions {
                    _ = try connection.execute(
                        "INSERT INTO login_sessions (\(Self.sessionColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                        [.text(session.token), .text(session.user), .integer(Int64(session.uid)), .text(session.service),
                         .text(orNull: session.tty), .text(orNull: session.runtimeDirectory), .text(orNull: session.display),
                         .text(orNull: session.waylandDisplay), .text(orNull: session.bus), .text(orNull: session.sessionID),
                         .integer(Int64(session.leader)), .integer(Int64(bitPattern: session.leaderStarted)),
                         .real(session.openedAt), .integer(session.nested ? 1 : 0)])
                }
            }
        }
    }

    /// Every recorded login session, by token. A row whose numbers are out of
    /// range is left out, never taken up.
    package func loginSessions() throws(StoreError) -> [StoredLoginSession] {
        try withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT \(Self.sessionColumns) FROM login_sessions ORDER BY token") { row in
                let uid = row.int64(at: 2), leader = row.int64(at: 10), started = row.int64(at: 11)
                guard let token = row.string(at: 0), let user = row.string(at: 1), let service = row.string(at: 3),
                      (0...Int64(UInt32.max)).contains(uid), (2...Int64(Int32.max)).contains(leader), started >= 0 else {
                    return nil
                }
                return StoredLoginSession(
                    token: token, user: user, uid: UInt32(uid), service: service, tty: row.string(at: 4),
                    runtimeDirectory: row.string(at: 5), display: row.string(at: 6), waylandDisplay: row.string(at: 7),
                    bus: row.string(at: 8), sessionID: row.string(at: 9), leader: Int32(leader),
                    leaderStarted: UInt64(started), openedAt: row.double(at: 12), nested: row.int64(at: 13) == 1)
            }.compactMap { $0 }
        }
    }

    /// Replaces the recorded monitor processes with `processes`, running since boot `boot`.
    package func replaceMonitorProcesses(_ processes: [StoredMonitorProcess], boot: String) throws(StoreError) {
        try withConnection { (connection) throws(StoreError) in
            try connection.transaction { () throws(StoreError) in
                _ = try connection.execute("DELETE FROM running_monitors")
                for process in processes {
                    _ = try connection.execute(
                        "INSERT INTO running_monitors (pid, started, uid, boot_id) VALUES (?1, ?2, ?3, ?4)",
                        [.integer(Int64(process.pid)), .integer(Int64(bitPattern: process.started)),
                         .integer(Int64(process.uid)), .text(boot)])
                }
            }
        }
    }

    /// The recorded monitor processes of boot `boot` (those of another boot are not this machine's processes now).
    package func monitorProcesses(boot: String) throws(StoreError) -> [StoredMonitorProcess] {
        try withConnection { (connection) throws(StoreError) in
            try connection.query("SELECT pid, started, uid FROM running_monitors WHERE boot_id = ?1 ORDER BY pid",
                                 [.text(boot)]) { row in
                let pid = row.int64(at: 0), started = row.int64(at: 1), uid = row.int64(at: 2)
                guard (2...Int64(Int32.max)).contains(pid), started >= 0, (1...Int64(UInt32.max)).contains(uid) else { return nil }
                return StoredMonitorProcess(pid: Int32(pid), started: UInt64(started), uid: UInt32(uid))
            }.compactMap { $0 }
        }
    }
}

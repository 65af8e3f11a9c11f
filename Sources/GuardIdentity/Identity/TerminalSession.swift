#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The terminal session a calling process belongs to, as the kernel records
/// it: its user, its controlling terminal, its session, and when that
/// session's leader started. sudo binds its timestamp to the same things
/// (`timestamp_type=tty`).
///
/// Read from `/proc/PID/stat` of the process the connection's pidfd pins,
/// never from what the client says. A process cannot join a session it was
/// not born into (setsid(2) only makes new ones), and a recycled session
/// leader's pid has another start time, so two sessions never share a key.
package struct TerminalSession: Hashable, Sendable {
    package var uid: uid_t
    /// `tty_nr`: the controlling terminal's device number.
    package var terminal: UInt64
    package var sessionID: Int32
    /// The session leader's start time, in clock ticks after boot.
    package var leaderStart: UInt64

    /// The session of process `pid` (pinned by `pidfd`) run by `uid`; nil
    /// when it has no controlling terminal, or its session cannot be read.
    package static func of(pid: pid_t, pidfd: CInt, uid: uid_t) -> TerminalSession? {
        guard let process = ProcessStat.read(pid), process.terminal != 0, process.sessionID > 0,
              let leader = ProcessStat.read(pid_t(process.sessionID)), leader.terminal == process.terminal else {
            return nil
        }
        // Still the very process the connection pinned: its pid was not recycled while read.
        guard ProcessHandle.isAlive(pidfd: pidfd) else { return nil }
        return TerminalSession(uid: uid, terminal: process.terminal, sessionID: process.sessionID,
                               leaderStart: leader.startTime)
    }
}

/// The fields of `/proc/PID/stat` (proc(5)) a session is known by.
private struct ProcessStat {
    var sessionID: Int32
    var terminal: UInt64
    var startTime: UInt64

    static func read(_ pid: pid_t) -> ProcessStat? {
        guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/stat", limit: 4096) else { return nil }
        // The command name (field 2) may hold spaces and parentheses: fields
        // are counted from its last ')'.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        // fields[0] is field 3 (state): session is field 6, tty_nr 7, starttime 22.
        guard fields.count > 19, let session = Int32(fields[3]), let terminal = Int64(fields[4]),
              let start = UInt64(fields[19].trimmingWhitespace()) else { return nil }
        return ProcessStat(sessionID: session, terminal: UInt64(bitPattern: terminal), startTime: start)
    }
}

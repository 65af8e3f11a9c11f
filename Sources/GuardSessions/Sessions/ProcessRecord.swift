#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// One process as `/proc/PID/stat` and `/proc/PID/status` show it, read as
/// hostile input (a process names itself: its `comm` may hold spaces and
/// parentheses, so fields are counted after the last `)`).
struct ProcessRecord: Sendable, Equatable {
    var pid: pid_t
    /// Field 4 of `stat`.
    var parent: pid_t
    /// Field 6 of `stat`: the session id (the pid of the session's leader).
    var session: pid_t
    /// Field 22 of `stat`: when it started, in clock ticks since boot. With
    /// the pid, names one process for good.
    var startTicks: UInt64
    /// `Uid:` of `status`: real, effective, saved.
    var uids: (real: UInt32, effective: UInt32, saved: UInt32)

    static func == (lhs: ProcessRecord, rhs: ProcessRecord) -> Bool {
        (lhs.pid, lhs.parent, lhs.session, lhs.startTicks) == (rhs.pid, rhs.parent, rhs.session, rhs.startTicks)
            && lhs.uids == rhs.uids
    }

    /// Whether every uid of the process is `uid`: a set-user-ID program the
    /// user started (su, passwd) is not theirs.
    func isWholly(_ uid: UInt32) -> Bool {
        uids.real == uid && uids.effective == uid && uids.saved == uid
    }

    /// The process `pid` now, or nil when it is gone or its files are not as
    /// the kernel writes them.
    static func read(_ pid: pid_t) -> ProcessRecord? {
        guard let stat = try? FileDescriptor.readFile("/proc/\(pid)/stat", limit: 4096),
              let close = stat.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        // After the name: state, ppid, pgrp, session, …, starttime (22nd field overall).
        guard fields.count > 19, let parent = number(fields[1]).flatMap(pid_t.init(exactly:)),
              let session = number(fields[3]).flatMap(pid_t.init(exactly:)),
              let started = number(fields[19]) else { return nil }
        guard let status = try? FileDescriptor.readFile("/proc/\(pid)/status", limit: 16 * 1024) else { return nil }
        var uids: [UInt32] = []
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: Array("Uid:".utf8)) {
            uids = line.dropFirst(4).split(whereSeparator: { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") })
                .compactMap { number($0).flatMap(UInt32.init(exactly:)) }
        }
        guard uids.count >= 3 else { return nil }
        return ProcessRecord(pid: pid, parent: parent, session: session, startTicks: started,
                             uids: (uids[0], uids[1], uids[2]))
    }

    /// Every process in `/proc` now, at most `limit` of them, by pid. A
    /// process that ends while it is read is left out.
    static func all(limit: Int) -> [pid_t: ProcessRecord] {
        guard let proc = try? FileDescriptor.open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
              let entries = try? proc.readDirectory() else { return [:] }
        var table: [pid_t: ProcessRecord] = [:]
        for entry in entries {
            guard table.count < limit else { break }
            guard let pid = number(entry.name.bytes[...]).flatMap(pid_t.init(exactly:)), pid > 0,
                  let record = read(pid) else { continue }
            table[pid] = record
        }
        return table
    }

    /// When the process started, on the wall clock: its start in ticks since
    /// boot against `CLOCK_BOOTTIME` now (which, unlike `/proc/stat`'s
    /// `btime`, the Guard's `ProcSubset=pid` leaves readable).
    var startedAt: UnixTime {
        var boot = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        let ticks = Double(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        let age = Double(boot.tv_sec) + Double(boot.tv_nsec) / 1e9 - Double(startTicks) / ticks
        return UnixTime(seconds: UnixTime.now.seconds - age)
    }

    /// A decimal number of ASCII digits alone, or nil.
    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}

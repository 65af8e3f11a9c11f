#if canImport(Glibc)
import Glibc
#endif
import FamilyConfiguration
import FamilyControlsModel
import GuardProtocol
import LockEngine
import SystemKit
import GuardStore

extension MonitorKeeper.Supervisor {
    // MARK: Output, the table others read, and the record on disk

    /// Logs what the monitor wrote, a line at a time, within its budget.
    func drain(_ instance: Instance) {
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

    func logLine(_ instance: Instance, _ bytes: [UInt8]) {
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


    func publish(held: Set<MonitorKeeper.Key> = []) {
        var table: [MonitorKeeper.Key: MonitorSnapshot] = [:], owners: [MonitorKeeper.Key: MonitorKeeper.Owner] = [:]
        for (key, instance) in instances {
            table[key] = instance.snapshot
            owners[key] = MonitorKeeper.Owner(uid: instance.uid, sandboxFiles: instance.sandboxFiles)
        }
        keeper.publish(table, owners: owners, held: held)
    }

    /// Records the running monitors' pids and start times, so that the next
    /// Guard ends those this one leaves behind if it crashes.
    func writeRecord() {
        guard let store = context.record else { return }
        var processes: [StoredMonitorProcess] = []
        for instance in instances.values + leaving {
            guard let process = instance.process, process.exit == nil,
                  let started = LoginSessions.startTime(of: process.pid) else { continue }
            processes.append(StoredMonitorProcess(pid: process.pid, started: started, uid: instance.uid))
        }
        do throws(StoreError) {
            // Under ProcSubset=pid there is no boot id to read ("-"): the start
            // time and the owner still tell a recycled pid apart.
            try store.replaceMonitorProcesses(processes, boot: Self.bootID() ?? "-")
        } catch {
            context.logger.warning("monitor: cannot record the running monitors: \(error)")
        }
    }

    /// Ends the monitors a Guard before this one left running: each one
    /// still the same process (its start time) of the same user.
    func endLeftovers() {
        guard let store = context.record else { return }
        let recorded: [StoredMonitorProcess]
        do throws(StoreError) {
            recorded = try store.monitorProcesses(boot: Self.bootID() ?? "-")
        } catch {
            context.logger.error("monitor: cannot read the monitors an earlier Guard left running (\(error)); "
                + "any still running are not ended")
            return
        }
        var ended = 0
        for process in recorded {
            guard let handle = ProcessHandle.open(pid: process.pid), LoginSessions.startTime(of: process.pid) == process.started,
                  Self.owner(of: process.pid) == process.uid else { continue }
            _ = ProcessHandle.send(SIGKILL, to: handle.rawValue)
            ended += 1
        }
        if ended > 0 {
            context.logger.notice("monitor: ended \(ended) monitor(s) an earlier Guard left running; starting them afresh")
        }
    }

    static func bootID() -> String? {
        guard let bytes = try? FileDescriptor.readFile("/proc/sys/kernel/random/boot_id", limit: 64) else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

    /// The real uid `/proc/PID/status` names (a monitor is not dumpable,
    /// so `/proc/PID` itself belongs to root).
    static func owner(of pid: pid_t) -> UInt32? {
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

import Glibc
import SystemKit
import TestSupport

/// A server a test runs in the foreground (slapd, sssd): started with
/// `/dev/null` as its standard input, a log file as its output and error,
/// and every other descriptor of this process closed in it.
///
/// Not Foundation's `Process`: a server it starts can keep a descriptor that
/// belongs to another command started at the same moment by a test beside
/// it (the stream that tells Foundation that command ended), and that
/// test then waits for good on a command that ended long ago.
final class Daemon {
    private let process: HelperProcess
    let pid: pid_t

    /// Starts `path` with `arguments`, its output and error appended to `log`
    /// (emptied first when `truncating`), in this process's environment.
    init(start path: String, _ arguments: [String], log: String, truncating: Bool) throws {
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncating ? O_TRUNC : 0)
        let output = open(log, flags, 0o600)
        guard output >= 0 else { throw FixtureError("cannot open \(log): errno \(errno)") }
        defer { close(output) }
        let input = open("/dev/null", O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw FixtureError("cannot open /dev/null: errno \(errno)") }
        defer { close(input) }
        do {
            process = try HelperProcess.spawn(path, arguments: arguments, input: input, output: output, error: output)
        } catch {
            throw FixtureError("cannot start \(path): \(error)")
        }
        pid = process.pid
    }

    /// How it ended, once it has (reaped then); nil while it runs.
    var exit: HelperProcess.Exit? { try? process.waitForExit(until: .now) }

    var isRunning: Bool { exit == nil }

    /// Sends `signal` while it runs (its pid is not reused before it is reaped here).
    func signal(_ signal: CInt) {
        if isRunning { kill(pid, signal) }
    }

    /// Asks it to end (`SIGTERM`), waits up to `waitingSeconds`, then kills it.
    func stop(waitingSeconds: Int) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = MonotonicInstant.now.advanced(by: .seconds(waitingSeconds))
        if (try? process.waitForExit(until: deadline)) ?? nil == nil { process.kill() }
    }
}

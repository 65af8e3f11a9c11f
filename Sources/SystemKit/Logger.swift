#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One line per event on standard error, readable by an administrator and by
/// journald (which adds its own timestamps, so the `<N>` priority prefix is
/// used when standard error is the journal).
///
/// Never pass a secret to a logger.
public struct Logger: Sendable {
    /// Severity, with syslog's numbers.
    public enum Level: Int, Sendable, Comparable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        public static func < (a: Level, b: Level) -> Bool { a.rawValue > b.rawValue }
        var label: String {
            switch self {
            case .error: "error"
            case .warning: "warning"
            case .notice: "notice"
            case .info: "info"
            case .debug: "debug"
            }
        }
    }

    /// The subsystem named at the start of each line (`pam`, `store`, `lock`).
    public var label: String
    /// Messages below this level are dropped.
    public var minimumLevel: Level

    private static let writeLock = Mutex(())
    private static let journalPrefix = writesToJournal

    /// Whether standard error is journald's stream: `JOURNAL_STREAM` names
    /// its device and inode (sd_journal_stream_fd(3)), and they must match,
    /// since a child of a service inherits the variable but not always the stream.
    public static let writesToJournal: Bool = {
        guard let value = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: value).split(separator: ":")
        var status = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]),
              fstat(STDERR_FILENO, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }()

    public init(label: String, minimumLevel: Level = .info) {
        self.label = label
        self.minimumLevel = minimumLevel
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        let text = message().replacingNewlines()
        let line: String
        if Self.journalPrefix {
            line = "<\(level.rawValue)>\(label): \(text)\n"
        } else {
            line = "\(Self.timestamp()) \(level.label) \(label): \(text)\n"
        }
        Self.writeLock.withLock { _ in writeToStandardError(line) }
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ width: Int = 2) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))."
            + pad(Int32(now.tv_nsec / 1_000_000), 3) + "Z"
    }
}

extension String {
    /// Keeps one event on one line: control characters from hostile input are escaped.
    fileprivate func replacingNewlines() -> String {
        var out = ""
        out.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7f {
                out += "\\x" + String(scalar.value, radix: 16)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

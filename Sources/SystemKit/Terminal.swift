#if canImport(Glibc)
import Glibc
#endif

/// The controlling terminal (`/dev/tty`), for prompts a person answers, with
/// echo turned off for secrets and restored on every way out, Ctrl-C included.
///
/// Modeled on sudo's `tgetpass`: prompts go to the terminal, not to standard
/// output, so they work when output is piped.
public final class Terminal {
    private let descriptor: FileDescriptor

    /// Opens `/dev/tty`; nil when the process has no controlling terminal.
    public init?() {
        guard let fd = try? FileDescriptor.open("/dev/tty", O_RDWR | O_NOCTTY) else { return nil }
        descriptor = fd
    }

    /// The terminal's name for `PAM_TTY` (`/dev/pts/3`), when it has one.
    public static var name: String? {
        for fd in [CInt(0), 1, 2] where isatty(fd) == 1 {
            if let name = ttyname(fd) { return String(cString: name) }
        }
        return nil
    }

    /// Writes `text` to the terminal.
    public func write(_ text: String) {
        try? descriptor.writeAll(Array(text.utf8))
    }

    /// Shows `prompt` and reads one line, with echo off when `secret`.
    /// - Throws: ``LineReader/Failure`` on end of input, timeout or a read error.
    public func readLine(prompt: String, secret: Bool, deadline: MonotonicInstant? = nil) throws(LineReader.Failure) -> SecretBytes {
        var original = termios()
        guard secret, tcgetattr(descriptor.rawValue, &original) == 0 else {
            write(prompt)
            return try LineReader.readLine(from: descriptor.rawValue, deadline: deadline)
        }
        EchoGuard.arm(descriptor: descriptor.rawValue, original: original)
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        _ = tcsetattr(descriptor.rawValue, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(descriptor.rawValue, TCSAFLUSH, &original)
            EchoGuard.disarm()
            write("\n")
        }
        // Echo goes off before the prompt shows, so nothing typed at the prompt is echoed.
        write(prompt)
        return try LineReader.readLine(from: descriptor.rawValue, deadline: deadline)
    }
}

/// Restores the terminal's echo if a signal ends the process while a secret
/// is being read. The handler uses only `tcsetattr`, which is async-signal-safe.
private enum EchoGuard {
    nonisolated(unsafe) static let saved = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    nonisolated(unsafe) static var savedDescriptor: CInt = -1
    static let signals: [CInt] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP]

    static func arm(descriptor: CInt, original: termios) {
        saved.pointee = original
        savedDescriptor = descriptor
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = restoreAndReraise
            action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
            sigemptyset(&action.sa_mask)
            sigaction(signal, &action, nil)
        }
    }

    static func disarm() {
        savedDescriptor = -1
        for signal in signals { Glibc.signal(signal, SIG_DFL) }
    }
}

private func restoreAndReraise(_ signal: CInt) {
    if EchoGuard.savedDescriptor >= 0 {
        _ = tcsetattr(EchoGuard.savedDescriptor, TCSAFLUSH, EchoGuard.saved)
        _ = write(EchoGuard.savedDescriptor, "\n", 1)
    }
    // SA_RESETHAND put the default action back: raising again ends the process as the signal should.
    raise(signal)
}

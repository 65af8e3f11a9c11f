#if canImport(Glibc)
import Glibc
#endif
import GuardSessions
import SystemKit

/// Tells a child something on their terminals, as `wall(1)` does: one line
/// written to each terminal the child has: the session's own (`PAM_TTY`,
/// logind's tty) and every terminal one of the child's processes has as its
/// controlling terminal (an SSH login's pseudo-terminal, which PAM names
/// only `ssh`). A terminal is written to only when it is a character device
/// the child owns (as `login`, sshd and terminal emulators leave it), opened
/// without becoming the Guard's controlling terminal and without blocking:
/// a terminal that does not take the line at once misses it.
package struct TerminalMessenger: SessionMessenger {
    /// How many processes are looked at for their terminals, at most.
    package var processesRead: Int

    package init(processesRead: Int = 65536) {
        self.processesRead = processesRead
    }

    package func tell(_ message: String, in sessions: [MonitorSession]) -> [String] {
        guard let uid = sessions.first?.session.uid else { return [] }
        var paths = Set(sessions.compactMap { Self.device(ofTTY: $0.session.tty) })
        paths.formUnion(Self.terminals(of: uid, limit: processesRead))
        let bytes = Array("\r\n\u{07}*** \(DisplayText.sanitized(message, limit: 400)) ***\r\n".utf8)
        var told: [String] = []
        for path in paths.sorted() where Self.write(bytes, to: path, owner: uid) { told.append(path) }
        return told
    }

    /// `/dev/pts/3` for a tty PAM or logind named `pts/3`, `/dev/pts/3` or
    /// `tty2`; nil for one that is no terminal's name (`ssh`, `:0`).
    static func device(ofTTY tty: String?) -> String? {
        guard var name = tty, !name.isEmpty else { return nil }
        if name.hasPrefix("/dev/") { name.removeFirst(5) }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        let plain = parts.allSatisfy { part in !part.isEmpty && part != "." && part != ".." }
        guard plain, parts.count <= 2, name.hasPrefix("pts/") || name.hasPrefix("tty") else { return nil }
        return "/dev/" + name
    }

    /// The controlling terminals of the processes whose effective uid is `uid`.
    static func terminals(of uid: UInt32, limit: Int) -> Set<String> {
        guard let proc = try? FileDescriptor.open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
              let entries = try? proc.readDirectory() else { return [] }
        var found: Set<String> = []
        var read = 0
        for entry in entries {
            guard read < limit else { break }
            guard let pid = Int32(entry.name.display), pid > 0 else { continue }
            read += 1
            var status = stat()
            guard stat("/proc/\(pid)", &status) == 0, status.st_uid == uid,
                  let bytes = try? FileDescriptor.readFile("/proc/\(pid)/stat", limit: 4096),
                  let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { continue }
            let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
            guard fields.count > 4, let number = Int64(String(decoding: fields[4], as: UTF8.self)), number > 0,
                  let path = device(number: UInt32(truncatingIfNeeded: number)) else { continue }
            found.insert(path)
        }
        return found
    }

    /// The device file of a terminal number (`tty_nr` of `/proc/PID/stat`):
    /// a pseudo-terminal (majors 136 to 143) or a virtual console (major 4, minors 1 to 63).
    static func device(number: UInt32) -> String? {
        let major = (number >> 8) & 0xFFF
        let minor = (number & 0xFF) | ((number >> 12) & 0xFFF00)
        if (136...143).contains(major) { return "/dev/pts/\((major - 136) * 256 + minor)" }
        if major == 4, (1...63).contains(minor) { return "/dev/tty\(minor)" }
        return nil
    }

    /// Writes `bytes` to the terminal at `path` when it is a character device `owner` owns.
    static func write(_ bytes: [UInt8], to path: String, owner: UInt32) -> Bool {
        guard let terminal = try? FileDescriptor.open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC) else {
            return false
        }
        defer { terminal.close() }
        guard let status = try? terminal.status(), status.mode & UInt32(S_IFMT) == UInt32(S_IFCHR), status.uid == owner else { return false }
        return (try? terminal.writeAll(bytes)) != nil
    }
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import TimeLimits

/// The login-limits file: the state the PAM module's account check decides
/// from, with no connection to the Guard (`docs/administrators.md`). One
/// `child` line per child with limits in force:
///
/// ```
/// familycontrols-login-limits 1
/// # written by familycontrolsd at 2026-12-05T21:14:00+0000; do not edit
/// child UID DAY USED DAILY EXTRA WINDOWS OPEN_UNTIL NAMES
/// ```
///
/// Root's alone (mode 0600), replaced in one step (a temporary file in the
/// same folder, flushed, renamed over it), so the module reads the old file
/// or the new one, never a part.
package enum LoginLimitsFile {
    /// The file's name in the Guard's state directory.
    package static let name = "login-limits"
    /// The first line, which the module checks before reading on.
    package static let header = "familycontrols-login-limits 1"
    /// The longest line the module reads.
    package static let lineLimit = 4096

    /// The file's text for `children` on local day `day`, with the seconds
    /// each used today (`used`, by uid), written at `time`. Children without
    /// any limit are left out; a child's extra time counts only when it is
    /// for `day`. App names are made one line of printable text, cut so the
    /// line stays within ``lineLimit`` bytes.
    package static func text(_ children: [ChildTimeLimits], used: [UInt32: Int], day: String, at time: UnixTime) -> String {
        var text = header + "\n# written by familycontrolsd at \(stamp(time)); do not edit\n"
        for child in children.sorted(by: { $0.uid < $1.uid }) where child.limits.limitsAnything {
            text += line(child, used: used[child.uid] ?? 0, day: day) + "\n"
        }
        return text
    }

    /// One child's line.
    package static func line(_ child: ChildTimeLimits, used: Int, day: String) -> String {
        let extra = child.day == day ? max(0, child.extraSeconds) : 0
        let openUntil = child.openUntil.isFinite ? max(0, Int64(child.openUntil.rounded(.down))) : 0
        let fields = ["child", String(child.uid), day, String(max(0, used)),
                      child.limits.daily.map { String($0.seconds) } ?? "-", String(extra),
                      child.limits.hours?.stateField ?? "-", String(openUntil)]
        let start = fields.joined(separator: " ") + " "
        let names = child.appNames.map { DisplayText.sanitized($0, limit: 200) }.filter { !$0.isEmpty }
        var joined = names.isEmpty ? "an approved app" : names.joined(separator: ", ")
        while !joined.isEmpty, start.utf8.count + joined.utf8.count > lineLimit { joined.removeLast() }
        return start + joined
    }

    /// Writes `text` to `path`: root's, mode 0600, replacing the file in one step.
    /// - Throws: ``Errno`` from `open`, `write`, `fsync` or `rename`.
    package static func write(_ text: String, to path: String) throws(Errno) {
        try FileDescriptor.replaceFile(path, with: Array(text.utf8), mode: 0o600, temporarySuffix: ".new")
    }

    /// `2026-12-05T21:14:00+0100`: local time, with its offset from UTC.
    static func stamp(_ time: UnixTime) -> String {
        var whole = time_t(time.seconds.rounded(.down))
        var parts = tm()
        localtime_r(&whole, &parts)
        func pad(_ value: Int, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let offset = Int(parts.tm_gmtoff) / 60
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1))-\(pad(Int(parts.tm_mday)))T"
            + "\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec)))"
            + (offset < 0 ? "-" : "+") + pad(abs(offset) / 60) + pad(abs(offset) % 60)
    }
}

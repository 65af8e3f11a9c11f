#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// GNOME's parental controls (malcontent) keep a child's session limits as
/// an AccountsService extension: the group
/// `[com.endlessm.ParentalControls.SessionLimits]` of the user's file in
/// `/var/lib/AccountsService/users`, whose `LimitType` is 1 while a daily
/// schedule is set. Both malcontent's and an app's time limits then apply
/// to the child, each kept by its own program: `--check-config` says so.
package enum MalcontentSessionLimits {
    package static let folder = "/var/lib/AccountsService/users"
    static let group = "[com.endlessm.ParentalControls.SessionLimits]"

    /// Whether malcontent's session limits are set for `user` (their
    /// AccountsService file, root's, read as text, never executed).
    package static func areSet(for user: String, in folder: String = folder) -> Bool {
        guard !user.contains("/"), !user.hasPrefix("."),
              let bytes = try? FileDescriptor.readFile("\(folder)/\(user)", limit: 1 << 20) else { return false }
        var inGroup = false
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("[") {
                inGroup = line == group
            } else if inGroup, line.hasPrefix("LimitType") {
                let value = line.drop { $0 != "=" }.dropFirst().trimmingWhitespace()
                // GVariant text: "1" or "uint32 1"; 0 is "no limit".
                return value.split(separator: " ").last.map { $0 != "0" } ?? false
            }
        }
        return false
    }

    /// A warning for each of `children` (users with time limits an app set)
    /// whose malcontent session limits are set too.
    package static func findings(children: [String], in folder: String = folder) -> [ConfigurationFinding] {
        children.sorted().filter { areSet(for: $0, in: folder) }.map { child in
            ConfigurationFinding(
                severity: .warning, file: "\(folder)/\(child)", line: 0,
                message: "\(child) has GNOME parental controls' session limits (malcontent) as well as time limits an "
                    + "approved app set: both apply, each kept by its own program; keep one (malcontent-control, or familyctl limits)")
        }
    }
}


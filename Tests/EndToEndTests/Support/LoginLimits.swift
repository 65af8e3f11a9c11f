import Foundation
import Testing
import TestSupport

/// The login-limits state file (docs/design/login-limits.md) as a test
/// writes it, with windows built around the machine's local time now, so a
/// test does not depend on the hour it runs at.
struct LoginLimits {
    static let header = "familycontrols-login-limits 1"
    static let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Now in the machine's local time (/etc/localtime, as the module reads it).
    struct Now {
        var unix: Int
        var day: String
        var weekday: Int // 0 Monday
        var minute: Int
    }

    static func now() -> Now {
        var seconds = time(nil)
        var local = tm()
        localtime_r(&seconds, &local)
        let day = String(format: "%04d-%02d-%02d", Int(local.tm_year) + 1900, Int(local.tm_mon) + 1, Int(local.tm_mday))
        return Now(unix: seconds, day: day, weekday: (Int(local.tm_wday) + 6) % 7,
                   minute: Int(local.tm_hour) * 60 + Int(local.tm_min))
    }

    /// Now in the zone `identifier` (a machine whose /etc/localtime is that zone).
    static func now(in identifier: String) -> Now? {
        guard let zone = TimeZone(identifier: identifier) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date()
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .weekday], from: date)
        guard let year = parts.year, let month = parts.month, let day = parts.day, let hour = parts.hour,
              let minute = parts.minute, let weekday = parts.weekday else { return nil }
        return Now(unix: Int(date.timeIntervalSince1970), day: String(format: "%04d-%02d-%02d", year, month, day),
                   weekday: (weekday + 5) % 7, minute: hour * 60 + minute)
    }

    static func clock(_ minute: Int) -> String { String(format: "%02d%02d", minute / 60, minute % 60) }
    static func shown(_ minute: Int) -> String { String(format: "%02d:%02d", minute / 60, minute % 60) }

    /// Every day the same range, from 30 minutes before now to 30 after.
    static func inside(_ now: Now) -> String {
        let range = "\(clock(max(0, now.minute - 30)))-\(clock(min(1440, now.minute + 30)))"
        return Array(repeating: range, count: 7).joined(separator: "/")
    }

    /// Every day the same two hours, twelve hours away from now: the hours a
    /// time zone of the child's own would move now into.
    static func twelveHoursAway(_ now: Now) -> String {
        let away = (now.minute + 720) % 1440
        let range = "\(clock(max(0, away - 60)))-\(clock(min(1440, away + 60)))"
        return Array(repeating: range, count: 7).joined(separator: "/")
    }

    /// Seven groups, today's (and every other day's) `none` but `days`: a
    /// weekday offset from today and its group.
    static func windows(_ now: Now, _ days: [Int: String]) -> String {
        (0..<7).map { offset in days[(offset - now.weekday + 7) % 7] ?? "none" }.joined(separator: "/")
    }

    /// Hours that do not hold now, and the sentence the child reads about
    /// when they may log in again: later today when the day allows, else
    /// tomorrow.
    static func outside(_ now: Now) -> (windows: String, again: String) {
        if now.minute + 120 <= 1440 {
            let start = now.minute + 60
            return (windows(now, [0: "\(clock(start))-\(clock(start + 60))"]), "You may log in again at \(shown(start)).")
        }
        return (windows(now, [1: "0730-2000"]), "You may log in again tomorrow at 07:30.")
    }

    /// One `child` line.
    static func line(uid: UInt32, day: String, used: Int = 0, daily: Int? = nil, extra: Int = 0, windows: String = "-",
                     openUntil: Int = 0, names: String = "FamilyControls Demo") -> String {
        "child \(uid) \(day) \(used) \(daily.map(String.init) ?? "-") \(extra) \(windows) \(openUntil) \(names)"
    }

    /// Writes `text` to `path` as the Guard would: root's, 0600, in place by rename.
    static func write(_ text: String, to path: String, mode: mode_t = 0o600) throws {
        let temporary = "\(path).tmp"
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        chmod(temporary, mode)
        chown(temporary, 0, 0)
        guard rename(temporary, path) == 0 else { throw FixtureError("rename to \(path) failed") }
    }

    /// The header and `lines`, each ended by a newline.
    static func write(lines: [String], to path: String) throws {
        try write(([header] + lines).map { $0 + "\n" }.joined(), to: path)
    }

    /// The message the module shows a child it refuses.
    static func message(hours: Bool, names: String = "FamilyControls Demo", again: String, user: String) -> String {
        (hours ? "You may not log in at this hour: \(names) set your login hours.\n"
               : "Your time for today is used up: \(names) set your daily time.\n")
            + "\(again)\nA parent or guardian can give you more time with: familyctl limits more --user \(user)"
    }

    /// Builds pam_familycontrols.so as the package builds it, into `directory`.
    static func buildModule(into directory: String) async throws -> String {
        let module = "\(directory)/pam_familycontrols.so"
        try await run("\(packageRoot)/Config/build-pam-module.sh", [module]).requireSuccess()
        return module
    }
}

/// The machine's login stacks, in a private mount namespace: copies of
/// /etc/pam.d and of libpam's module folder (with the module just built)
/// bind-mounted over the real ones for the commands a test runs there, and
/// the shipped pam-auth-update profile applied to the copies by the real
/// pam-auth-update (its state and debconf's copied too). The machine's own
/// files are never written; the account line reads `limits`, and the session
/// line tells the Guard on `socket` when one is given.
struct PrivateLoginStack {
    static let moduleFolder = "/usr/lib/x86_64-linux-gnu/security"
    let directory: String
    /// The login-limits file the account line reads: the test's own, or a Guard's.
    let limits: String
    var pamDirectory: String { "\(directory)/pam.d" }
    private var binds: [(String, String)] {
        [("\(directory)/pam.d", "/etc/pam.d"), ("\(directory)/security", Self.moduleFolder)]
    }

    /// `limits`: the login-limits file the account line reads (a Guard's); a file of the stack's own by default.
    static func make(socket: String? = nil, limits: String? = nil) async throws -> PrivateLoginStack {
        let directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let stack = PrivateLoginStack(directory: directory, limits: limits ?? "\(directory)/login-limits")
        let module = try await LoginLimits.buildModule(into: directory)
        try await run("/bin/cp", ["-a", moduleFolder, "\(directory)/security"]).requireSuccess()
        try await run("/bin/cp", [module, "\(directory)/security/pam_familycontrols.so"]).requireSuccess()
        try await pamAuthUpdate(["--package"], in: directory, profile: "\(packageRoot)/Config/pam-configs/familycontrols")
        // The test's state file in place of /var/lib/familycontrols/login-limits.
        let account = "\(directory)/pam.d/common-account"
        let text = try String(contentsOfFile: account, encoding: .utf8)
        try text.replacingOccurrences(of: "pam_familycontrols.so", with: "pam_familycontrols.so limits=\(stack.limits)")
            .write(toFile: account, atomically: true, encoding: .utf8)
        if let socket {
            let session = "\(directory)/pam.d/common-session"
            let text = try String(contentsOfFile: session, encoding: .utf8)
            try text.replacingOccurrences(of: "pam_familycontrols.so", with: "pam_familycontrols.so socket=\(socket)")
                .write(toFile: session, atomically: true, encoding: .utf8)
        }
        return stack
    }

    /// Copies the machine's /etc/pam.d to `directory`/pam.d and runs the real
    /// pam-auth-update with `arguments` on the copy (its state, profiles, with
    /// `profile` added, and debconf's copied too); the machine's files are never written.
    static func pamAuthUpdate(_ arguments: [String], in directory: String, profile: String? = nil) async throws {
        try await run("/bin/cp", ["-a", "/etc/pam.d", "\(directory)/pam.d"]).requireSuccess()
        try await run("/bin/cp", ["-a", "/var/lib/pam", "\(directory)/varlibpam"]).requireSuccess()
        try await run("/bin/cp", ["-a", "/usr/share/pam-configs", "\(directory)/pam-configs"]).requireSuccess()
        if let profile { try await run("/bin/cp", [profile, "\(directory)/pam-configs/"]).requireSuccess() }
        try FileManager.default.createDirectory(atPath: "\(directory)/debconf", withIntermediateDirectories: true)
        try await run("/bin/cp", ["/var/cache/debconf/config.dat", "/var/cache/debconf/templates.dat",
                                  "\(directory)/debconf/"]).requireSuccess()
        #expect(FileManager.default.createFile(atPath: "\(directory)/debconf/passwords.dat", contents: nil,
                                       attributes: [.posixPermissions: 0o600]))
        let binds = [("\(directory)/pam.d", "/etc/pam.d"), ("\(directory)/varlibpam", "/var/lib/pam"),
                     ("\(directory)/pam-configs", "/usr/share/pam-configs"), ("\(directory)/debconf", "/var/cache/debconf")]
        let mounts = binds.map { "mount --bind '\($0.0)' '\($0.1)'" }.joined(separator: " && ")
        let update = try await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c",
                                                        "\(mounts) && exec \"$@\"", "sh", "/usr/sbin/pam-auth-update"] + arguments,
                                   environment: ["DEBIAN_FRONTEND": "noninteractive"])
        guard update.succeeded else { throw FixtureError("pam-auth-update failed: \(update.standardError)") }
    }

    /// The account line pam-auth-update wrote from the shipped profile.
    var accountStack: String { (try? String(contentsOfFile: "\(pamDirectory)/common-account", encoding: .utf8)) ?? "" }

    /// `command` in a mount namespace of its own where the copies stand in for the machine's stacks.
    func namespace(_ command: [String], extra: [(String, String)] = []) -> [String] {
        let mounts = (binds + extra).map { "mount --bind '\($0.0)' '\($0.1)'" }.joined(separator: " && ")
        return ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                "\(mounts) && exec \"$@\"", "sh"] + command
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

import Foundation
import Testing
import TestSupport

/// `pam_familycontrols.so`'s account phase, built as the package builds it,
/// run by the real libpam through `pamtester` on a service of the test's own
/// (pam_wrapper's `PAM_WRAPPER_SERVICE_DIR`: /etc/pam.d is never touched),
/// for real users, against state files the test writes as the Guard would.
/// The service `check` tells the module's three answers apart: PAM_SUCCESS
/// ("account management done"), PAM_PERM_DENIED ("Permission denied") and
/// PAM_IGNORE, which falls to a module that fails with "Authentication failure".
@Suite(.serialized, .enabled(if: canManageUsers && FileManager.default.fileExists(atPath: pamWrapperLibrary)
                             && FileManager.default.isExecutableFile(atPath: "/usr/bin/pamtester"),
                             "needs root, libpam-wrapper and pamtester"))
struct PAMAccountModuleTests {
    enum Answer: Equatable { case success, permissionDenied, ignored }

    struct Result {
        var answer: Answer?
        /// What the child is shown, and the module's syslog lines (pam_wrapper prints them).
        var output: String
    }

    final class Fixture: @unchecked Sendable {
        let directory: String
        var limits: String { "\(directory)/login-limits" }

        init() async throws {
            directory = try makeTemporaryDirectory()
            let module = try await LoginLimits.buildModule(into: directory)
            try FileManager.default.createDirectory(atPath: "\(directory)/pam.d", withIntermediateDirectories: true)
            try """
                account [success=done ignore=ignore default=die] \(module) limits=\(limits)
                account requisite pam_succeed_if.so quiet uid eq 4294967290

                """.write(toFile: "\(directory)/pam.d/check", atomically: true, encoding: .utf8)
        }

        func account(_ user: String, environment: [String: String?] = [:]) async throws -> Result {
            var environment = environment
            environment["LD_PRELOAD"] = pamWrapperLibrary
            environment["PAM_WRAPPER"] = "1"
            environment["PAM_WRAPPER_DEBUGLEVEL"] = "3"
            environment["PAM_WRAPPER_SERVICE_DIR"] = "\(directory)/pam.d"
            let result = try await run("/usr/bin/pamtester", ["check", user, "acct_mgmt"], environment: environment)
            let output = result.standardOutput + result.standardError
            let answer: Answer? = output.contains("account management done") ? .success
                : output.contains("pamtester: Permission denied") ? .permissionDenied
                : output.contains("pamtester: Authentication failure") ? .ignored : nil
            return Result(answer: answer, output: output)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }
    }

    private func withChildAndAdult(_ body: (Fixture, ThrowawayUser, ThrowawayUser) async throws -> Void) async throws {
        let fixture = try await Fixture()
        try await withThrowawayUser(prefix: "k", password: false) { child in
            try await withThrowawayUser(prefix: "a", password: false) { adult in
                try await body(fixture, child, adult)
            }
        }
    }

    @Test func aChildOutsideTheirHoursIsRefusedWithTheAppAndWhenTheyMayLogInAgain() async throws {
        try await withChildAndAdult { fixture, child, adult in
            let now = LoginLimits.now()
            let outside = LoginLimits.outside(now)
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)],
                                  to: fixture.limits)
            let refused = try await fixture.account(child.name)
            #expect(refused.answer == .permissionDenied, "\(refused.output)")
            #expect(refused.output.contains(LoginLimits.message(hours: true, again: outside.again, user: child.name)),
                    "\(refused.output)")
            #expect(refused.output.contains("refused the login of \(child.name) (uid \(child.uid)): outside the login hours"),
                    "\(refused.output)")
            // Another user on the same file: not a child with limits, untouched.
            #expect(try await fixture.account(adult.name).answer == .ignored)

            // Today closed, tomorrow open; then only the day after tomorrow, named by its weekday.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                           windows: LoginLimits.windows(now, [1: "0730-2000"]))],
                                  to: fixture.limits)
            #expect(try await fixture.account(child.name).output.contains("You may log in again tomorrow at 07:30.\n"))
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                           windows: LoginLimits.windows(now, [2: "0900-2100,2200-2300"]))],
                                  to: fixture.limits)
            let later = try await fixture.account(child.name)
            let weekday = LoginLimits.weekdays[(now.weekday + 2) % 7]
            #expect(later.output.contains("You may log in again at 09:00 on \(weekday).\n"), "\(later.output)")
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                           windows: LoginLimits.windows(now, [:]))], to: fixture.limits)
            #expect(try await fixture.account(child.name).output.contains("Your login hours allow no day of the week."))
            // Only today, and over already: the same weekday next week.
            if now.minute >= 2 {
                try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                               windows: LoginLimits.windows(now, [0: "0000-\(LoginLimits.clock(now.minute - 1))"]))],
                                      to: fixture.limits)
                let nextWeek = try await fixture.account(child.name)
                #expect(nextWeek.output.contains("You may log in again at 00:00 on \(LoginLimits.weekdays[now.weekday]) next week.\n"),
                        "\(nextWeek.output)")
            }
        }
    }

    @Test func aChildInsideTheirHoursOrWithMoreTimeGrantedOutsideThemIsAllowed() async throws {
        try await withChildAndAdult { fixture, child, _ in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: fixture.limits)
            let inside = try await fixture.account(child.name)
            #expect(inside.answer == .success, "\(inside.output)")
            #expect(!inside.output.contains("You may"), "\(inside.output)")

            let outside = LoginLimits.outside(now).windows
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside, openUntil: now.unix + 600)],
                                  to: fixture.limits)
            #expect(try await fixture.account(child.name).answer == .success, "OPEN_UNTIL in the future")
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside, openUntil: now.unix - 600)],
                                  to: fixture.limits)
            #expect(try await fixture.account(child.name).answer == .permissionDenied, "OPEN_UNTIL past")
        }
    }

    @Test func aChildWhoseDailyTimeIsUsedUpIsRefusedUntilTomorrowButNotOnANewDayOrWithMoreTime() async throws {
        try await withChildAndAdult { fixture, child, _ in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 3600, daily: 3600,
                                                           names: "Homework Timer, FamilyControls Demo")],
                                  to: fixture.limits)
            let refused = try await fixture.account(child.name)
            #expect(refused.answer == .permissionDenied, "\(refused.output)")
            #expect(refused.output.contains(LoginLimits.message(hours: false, names: "Homework Timer, FamilyControls Demo",
                                                                again: "You may log in again tomorrow at 00:00.", user: child.name)),
                    "\(refused.output)")
            // With hours too, the next start is tomorrow's first range.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 4000, daily: 3600,
                                                           windows: LoginLimits.inside(now))], to: fixture.limits)
            let start = LoginLimits.shown(max(0, now.minute - 30))
            #expect(try await fixture.account(child.name).output.contains("You may log in again tomorrow at \(start).\n"))
            // Time left, more time granted, or yesterday's count: allowed.
            for line in [LoginLimits.line(uid: child.uid, day: now.day, used: 3599, daily: 3600),
                         LoginLimits.line(uid: child.uid, day: now.day, used: 3600, daily: 3600, extra: 600),
                         LoginLimits.line(uid: child.uid, day: "2000-01-01", used: 9000, daily: 3600)] {
                try LoginLimits.write(lines: [line], to: fixture.limits)
                let allowed = try await fixture.account(child.name)
                #expect(allowed.answer == .success, "\(line)\n\(allowed.output)")
            }
            // No time at all today.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 0, daily: 0)], to: fixture.limits)
            #expect(try await fixture.account(child.name).answer == .permissionDenied)
        }
    }

    /// Root is let through before the file is even opened: no line of
    /// the file, not even one for uid 0, can refuse it, and a missing file
    /// is not even logged for it.
    @Test func rootAndEveryoneWithoutALineAreNeverRefused() async throws {
        try await withChildAndAdult { fixture, child, adult in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: 0, day: now.day, used: 1, daily: 0, windows: LoginLimits.windows(now, [:])),
                                          LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.windows(now, [:]))],
                                  to: fixture.limits)
            #expect(try await fixture.account("root").answer == .ignored)
            #expect(try await fixture.account(adult.name).answer == .ignored)
            // No such account: the module ignores it, and pam_succeed_if says so.
            let unknown = try await fixture.account("fcnosuchuser")
            #expect(unknown.answer != .permissionDenied && unknown.output.contains("User not known"), "\(unknown.output)")
            #expect(try await fixture.account(child.name).answer == .permissionDenied)
            unlink(fixture.limits)
            let root = try await fixture.account("root")
            #expect(root.answer == .ignored)
            #expect(!root.output.contains("login limits"), "\(root.output)")
            let missing = try await fixture.account(adult.name)
            #expect(missing.answer == .ignored)
            #expect(missing.output.contains("login limits not applied to \(adult.name): \(fixture.limits): it does not exist"),
                    "\(missing.output)")
        }
    }

    /// The child sets TZ (su runs with their environment) to move the
    /// clock into their hours: the module keeps the machine's time.
    @Test func aTimeZoneOfTheCallersEnvironmentDoesNotMoveTheHours() async throws {
        try await withChildAndAdult { fixture, child, _ in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                           windows: LoginLimits.twelveHoursAway(now))],
                                  to: fixture.limits)
            for zone in ["UTC+12", "UTC-12", "<X>+12", ":Pacific/Kiritimati", "/etc/../usr/share/zoneinfo/Etc/GMT+12"] {
                let result = try await fixture.account(child.name, environment: ["TZ": zone])
                #expect(result.answer == .permissionDenied, "TZ=\(zone): \(result.output)")
            }
        }
    }

    /// Names are shown without a terminal's control sequences.
    @Test func theAppsNamesReachTheTerminalWithoutControlCharacters() async throws {
        try await withChildAndAdult { fixture, child, _ in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 1, daily: 0,
                                                           names: "Demo\u{1b}]0;owned\u{07} \u{9b}2J Ünïcode")],
                                  to: fixture.limits)
            let result = try await fixture.account(child.name)
            #expect(result.answer == .permissionDenied)
            #expect(result.output.contains("Demo?]0;owned? ?2J Ünïcode set your daily time."), "\(result.output)")
            #expect(!result.output.contains("\u{1b}") && !result.output.contains("\u{9b}"))
            // A name past 512 bytes is cut, and says so.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 1, daily: 0,
                                                           names: String(repeating: "n", count: 3000))], to: fixture.limits)
            let long = try await fixture.account(child.name)
            #expect(long.answer == .permissionDenied)
            #expect(long.output.contains(": " + String(repeating: "n", count: 512) + "... set your daily time."), "\(long.output)")
        }
    }

    /// Every damaged or untrusted file: the child is let through (PAM_IGNORE,
    /// never a refusal) and one syslog line says why; root and an adult are
    /// let through at once in every case.
    @Test func aDamagedOrUntrustedStateFileNeverRefusesAndSaysWhy() async throws {
        try await withChildAndAdult { fixture, child, adult in
            func othersGetInAtOnce(_ label: String) async throws {
                for user in ["root", adult.name] {
                    let started = ContinuousClock.now
                    let result = try await fixture.account(user)
                    #expect(result.answer == .ignored, "\(label), \(user): \(result.output)")
                    #expect(ContinuousClock.now - started < .seconds(10), "\(label), \(user)")
                }
            }
            let now = LoginLimits.now()
            let refusing = LoginLimits.line(uid: child.uid, day: now.day, used: 10, daily: 0, windows: LoginLimits.windows(now, [:]))
            let header = LoginLimits.header + "\n"
            let path = fixture.limits
            // (file text, what the log says)
            let files: [(String, String)] = [
                (header + refusing, "line 2: cut short (no end of line)"),
                (header + refusing.replacingOccurrences(of: " 10 ", with: " 1a ") + "\n", "line 2: a bad USED"),
                (header + refusing.replacingOccurrences(of: " 10 ", with: " 010 ") + "\n", "line 2: a bad USED"),
                (header + refusing.replacingOccurrences(of: " 10 ", with: " -10 ") + "\n", "line 2: a bad USED"),
                (header + refusing.replacingOccurrences(of: " 10 ", with: " 99999999999 ") + "\n", "line 2: a bad USED"),
                (header + refusing.replacingOccurrences(of: "child \(child.uid)", with: "child \(child.uid)0000000000") + "\n", "a bad UID"),
                (header + refusing.replacingOccurrences(of: now.day, with: "2026-02-30") + "\n", "line 2: a bad DAY"),
                (header + refusing.replacingOccurrences(of: "none/none", with: "none/0900-0800") + "\n", "line 2: bad WINDOWS"),
                (header + refusing.replacingOccurrences(of: "none/none", with: "none/2330-2401") + "\n", "line 2: bad WINDOWS"),
                (header + refusing.replacingOccurrences(of: "/none\(" ")", with: "/none/none ") + "\n", "line 2: bad WINDOWS"),
                (header + refusing.replacingOccurrences(of: " 10 ", with: " 10  ") + "\n", "line 2: a bad DAILY"),
                (header + refusing + String(repeating: "x", count: 4097) + "\n", "line 2: longer than 4096 bytes"),
                (header + refusing.replacingOccurrences(of: "Demo", with: "De\u{0}mo") + "\n", "line 2: a NUL byte"),
                ("familycontrols-login-limits 2\n" + refusing + "\n", "does not start with \"familycontrols-login-limits 1\""),
                (refusing + "\n", "does not start with"),
                ("", "it is empty"),
                (header + refusing + "\n" + String(repeating: "# padding\n", count: 110_000), "larger than 1 MiB"),
            ]
            for (text, why) in files {
                try LoginLimits.write(text, to: path)
                let result = try await fixture.account(child.name)
                #expect(result.answer == .ignored, "\(why): \(result.output)")
                #expect(result.output.contains(why), "\(why): \(result.output)")
                #expect(!result.output.contains("You may"), "\(why)")
                try await othersGetInAtOnce(why)
            }

            // A damaged line beside the child's: theirs still holds.
            try LoginLimits.write(header + "child 1 x\n" + refusing + "\n", to: path)
            let beside = try await fixture.account(child.name)
            #expect(beside.answer == .permissionDenied, "\(beside.output)")
            #expect(beside.output.contains("ignored 1 damaged line (line 2: "), "\(beside.output)")
            // A second line for the same uid is damage, not a second say.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now)), refusing],
                                  to: path)
            let twice = try await fixture.account(child.name)
            #expect(twice.answer == .success, "\(twice.output)")
            #expect(twice.output.contains("line 3: a second line for the same uid"), "\(twice.output)")

            // Untrusted: group- or other-writable, another owner, a symbolic link, not a file.
            let good = header + refusing + "\n"
            for (mode, why) in [(mode_t(0o620), "its group or others may write it"), (0o602, "its group or others may write it")] {
                try LoginLimits.write(good, to: path, mode: mode)
                let result = try await fixture.account(child.name)
                #expect(result.answer == .ignored && result.output.contains(why), "\(String(mode, radix: 8)): \(result.output)")
                try await othersGetInAtOnce(why)
            }
            try LoginLimits.write(good, to: path)
            chown(path, adult.uid, adult.gid)
            let owned = try await fixture.account(child.name)
            #expect(owned.answer == .ignored && owned.output.contains("it is not owned by root"), "\(owned.output)")
            try await othersGetInAtOnce("another owner")
            try LoginLimits.write(good, to: "\(path).real")
            unlink(path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "\(path).real")
            let linked = try await fixture.account(child.name)
            #expect(linked.answer == .ignored && linked.output.contains("it is a symbolic link"), "\(linked.output)")
            try await othersGetInAtOnce("a symbolic link")
            unlink(path)
            mkdir(path, 0o700)
            let folder = try await fixture.account(child.name)
            #expect(folder.answer == .ignored && folder.output.contains("it is not a regular file"), "\(folder.output)")
            try await othersGetInAtOnce("a folder")
            rmdir(path)
            mkfifo(path, 0o600)
            let fifo = try await fixture.account(child.name)
            #expect(fifo.answer == .ignored && fifo.output.contains("it is not a regular file"), "\(fifo.output)")
            try await othersGetInAtOnce("a FIFO")
            unlink(path)
            // The same file, trusted: refused (so each case above failed for its own reason).
            try LoginLimits.write(good, to: path)
            #expect(try await fixture.account(child.name).answer == .permissionDenied)
        }
    }
}

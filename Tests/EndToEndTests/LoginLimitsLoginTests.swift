import Foundation
import Testing
import TestSupport

/// Login hours and daily time kept at real logins: the machine's own `su`,
/// `login -f` on a pseudo-terminal and a real sshd (password, keyboard-
/// interactive and key logins), through the machine's own service files and
/// common-account with the shipped pam-auth-update profile applied by the
/// real pam-auth-update, all in a private mount namespace
/// (``PrivateLoginStack``): the machine's /etc/pam.d is never written.
private let loginToolsPresent = ["/usr/bin/unshare", "/usr/bin/su", "/usr/bin/login", "/usr/sbin/sshd", "/usr/bin/ssh",
                                  "/usr/bin/python3", "/usr/sbin/pam-auth-update", "/usr/bin/setpriv"]
    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    && FileManager.default.fileExists(atPath: PrivateLoginStack.moduleFolder + "/pam_unix.so")

@Suite(.serialized, .enabled(if: canManageUsers && loginToolsPresent,
                             "needs root, unshare, su, login, sshd, ssh, python3, setpriv and pam-auth-update"))
struct LoginLimitsLoginTests {
    /// What a shell prints once the login got through.
    static let marker = RealLogins.marker
    static let shellLine = RealLogins.shellLine

    private func withStack(_ body: (PrivateLoginStack, ThrowawayUser, ThrowawayUser) async throws -> Void) async throws {
        let stack = try await PrivateLoginStack.make()
        defer { stack.remove() }
        try await withThrowawayUser(prefix: "k") { child in
            try await withThrowawayUser(prefix: "a") { adult in
                try await body(stack, child, adult)
            }
        }
    }

    /// `su - USER -c 'echo in-42'` as root: su still runs the account phase.
    private func su(_ stack: PrivateLoginStack, _ user: String) async throws -> ProcessResult {
        try await RealLogins(stack: stack).su(user)
    }

    /// `command` on a pseudo-terminal in the private stacks, typing `secret` at a password prompt.
    private func onTerminal(_ stack: PrivateLoginStack, _ command: [String], secret: String = "") async throws -> String {
        try await RealLogins(stack: stack).onTerminal(command, secret: secret)
    }

    @Test func theShippedProfileAddsAnAccountLineThatRefusesOnlyWhenTheModuleSaysPermissionDenied() async throws {
        try await withStack { stack, child, _ in
            let account = stack.accountStack
            #expect(account.contains("account\t[success=ok ignore=ignore perm_denied=bad default=ignore]\tpam_familycontrols.so"),
                    "\(account)")
            // In the "Additional" block, after the permit that primes the stack.
            let permit = try #require(account.range(of: "pam_permit.so"))
            let ours = try #require(account.range(of: "pam_familycontrols.so"))
            #expect(permit.upperBound < ours.lowerBound, "\(account)")
            #expect((try? String(contentsOfFile: "\(stack.pamDirectory)/common-session", encoding: .utf8))?
                .contains("session\toptional\tpam_familycontrols.so") == true)

            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.windows(now, [:]))],
                                  to: stack.limits)
            #expect(try await su(stack, child.name).status != 0)
            // The module gone from where libpam looks (a half-removed package):
            // every login still succeeds, the child's too.
            unlink("\(stack.directory)/security/pam_familycontrols.so")
            let missing = try await su(stack, child.name)
            #expect(missing.status == 0 && missing.standardOutput.contains(Self.marker), "\(missing.standardError)")
        }
    }

    @Test func suRefusesAChildOutsideTheirHoursWithTheMessageAndNeverRootOrAnAdult() async throws {
        try await withStack { stack, child, adult in
            let now = LoginLimits.now()
            let outside = LoginLimits.outside(now)
            try LoginLimits.write(lines: [LoginLimits.line(uid: 0, day: now.day, used: 1, daily: 0, windows: LoginLimits.windows(now, [:])),
                                          LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)],
                                  to: stack.limits)
            let refused = try await su(stack, child.name)
            #expect(refused.status != 0)
            #expect(!refused.standardOutput.contains(Self.marker))
            #expect(refused.standardError.contains(LoginLimits.message(hours: true, again: outside.again, user: child.name)),
                    "\(refused.standardError)")
            for user in ["root", adult.name] {
                let allowed = try await su(stack, user)
                #expect(allowed.status == 0 && allowed.standardOutput.contains(Self.marker), "\(user): \(allowed.standardError)")
            }

            // Inside the hours; then a day's time used up.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: stack.limits)
            let inside = try await su(stack, child.name)
            #expect(inside.status == 0 && inside.standardOutput.contains(Self.marker), "\(inside.standardError)")
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, used: 5400, daily: 5400)], to: stack.limits)
            let spent = try await su(stack, child.name)
            #expect(spent.status != 0)
            #expect(spent.standardError.contains("Your time for today is used up: FamilyControls Demo set your daily time."),
                    "\(spent.standardError)")

            // No file, or a damaged one: everyone gets in.
            for text in [nil, "familycontrols-login-limits 1\nchild \(child.uid) \(now.day) 5400 5400 0 - 0"] {
                if let text { try LoginLimits.write(text, to: stack.limits) } else { unlink(stack.limits) }
                for user in [child.name, adult.name, "root"] {
                    let allowed = try await su(stack, user)
                    #expect(allowed.status == 0 && allowed.standardOutput.contains(Self.marker), "\(user): \(allowed.standardError)")
                }
            }
        }
    }

    /// The module decides from the file alone: the limits last written hold
    /// the same with the real Guard running (the session line telling it of
    /// the login it let through) and after it stopped, and no login waits.
    @Test func theLimitsLastWrittenHoldWithTheGuardRunningAndAfterItStops() async throws {
        try await withGuard { guardd in
            let stack = try await PrivateLoginStack.make(socket: guardd.socket)
            defer { stack.remove() }
            let child = guardd.child
            let now = LoginLimits.now()
            let outside = LoginLimits.outside(now)
            for running in [true, false] {
                if !running { guardd.stop() }
                try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)],
                                      to: stack.limits)
                let started = ContinuousClock.now
                let refused = try await su(stack, child.name)
                #expect(refused.status != 0, "Guard running: \(running)")
                #expect(refused.standardError.contains(LoginLimits.message(hours: true, again: outside.again, user: child.name)),
                        "Guard running: \(running): \(refused.standardError)")
                try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                      to: stack.limits)
                let allowed = try await su(stack, child.name)
                #expect(allowed.status == 0 && allowed.standardOutput.contains(Self.marker),
                        "Guard running: \(running): \(allowed.standardError)")
                // No wait on the Guard (the module never asks it): well under a
                // connection's timeout even on a loaded machine.
                #expect(ContinuousClock.now - started < .seconds(20), "Guard running: \(running)")
                if running {
                    #expect(await eventually { guardd.log.contains("session: \(child.name) opened (service su-l") }, "\(guardd.log)")
                    #expect(guardd.log.components(separatedBy: "session: \(child.name) opened").count == 2,
                            "only the login let through is a session: \(guardd.log)")
                }
            }
        }
    }

    /// su inherits the limits of whoever starts it: a child can make it
    /// short of memory (`ulimit -v`) or descriptors (`ulimit -n`) just
    /// where the module reads. Whatever fails then, they do not get in.
    @Test func suStartedWithMemoryOrDescriptorLimitsOfTheChildsChoosingStillKeepsThemOut() async throws {
        try await withStack { stack, child, _ in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.outside(now).windows)],
                                  to: stack.limits)
            let limits = stride(from: 4000, through: 12000, by: 200).map { ("v", $0) } + (3...16).map { ("n", $0) }
            var reached = 0
            for (kind, value) in limits {
                let script = "ulimit -\(kind) \(value) && exec /usr/bin/su - '\(child.name)' -s /bin/sh -c '\(Self.shellLine)'"
                let result = try await run("/usr/bin/env", ["-u", "TZ"] + stack.namespace(["/bin/sh", "-c", script]))
                #expect(!result.standardOutput.contains(Self.marker), "ulimit -\(kind) \(value): \(result.standardError)")
                if result.standardError.contains("You may not log in at this hour") { reached += 1 }
            }
            // The sweep reached the module's decision, not only failures before it.
            #expect(reached > 10, "\(reached)")
        }
    }

    /// A zone glibc cannot load (a child's memory limit, or a damaged
    /// /etc/localtime) is quietly UTC to it: the module notices, and a child
    /// with limits is refused; no one else is touched.
    @Test func aMachineTimeZoneThatCannotBeLoadedRefusesAChildWithLimitsAndNoOneElse() async throws {
        try await withStack { stack, child, adult in
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: stack.limits)
            let damaged = "\(stack.directory)/localtime"
            try "not a zone file\n".write(toFile: damaged, atomically: true, encoding: .utf8)
            func su(_ user: String) async throws -> ProcessResult {
                try await run("/usr/bin/env", ["-u", "TZ"] + stack.namespace(["/usr/bin/su", "-", user, "-s", "/bin/sh", "-c", Self.shellLine],
                                                                            extra: [(damaged, "/etc/localtime")]))
            }
            let refused = try await su(child.name)
            #expect(refused.status != 0 && !refused.standardOutput.contains(Self.marker))
            #expect(refused.standardError.contains("Your login cannot be checked against your login hours and daily time right now. Try again."),
                    "\(refused.standardError)")
            for user in [adult.name, "root"] {
                let allowed = try await su(user)
                #expect(allowed.status == 0 && allowed.standardOutput.contains(Self.marker), "\(user): \(allowed.standardError)")
            }
        }
    }

    /// The hours are the machine's local time: with /etc/localtime 14 hours
    /// ahead of UTC, or on GMT (offset 0, and not glibc's "UTC" fallback),
    /// windows around that zone's now let the child in and windows around
    /// another zone's now do not.
    @Test(arguments: ["Pacific/Kiritimati", "Europe/London"])
    func theHoursAreKeptInTheMachinesOwnTimeZone(_ identifier: String) async throws {
        let zoneFile = "/usr/share/zoneinfo/\(identifier)"
        try #require(FileManager.default.fileExists(atPath: zoneFile), "no \(zoneFile) (Debian: tzdata)")
        try await withStack { stack, child, _ in
            func su() async throws -> ProcessResult {
                try await run("/usr/bin/env", ["-u", "TZ"] + stack.namespace(["/usr/bin/su", "-", child.name, "-s", "/bin/sh", "-c", Self.shellLine],
                                                                            extra: [(zoneFile, "/etc/localtime")]))
            }
            let local = try #require(LoginLimits.now(in: identifier))
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: local.day, windows: LoginLimits.inside(local))],
                                  to: stack.limits)
            let inside = try await su()
            #expect(inside.status == 0 && inside.standardOutput.contains(Self.marker), "\(inside.standardError)")
            let away = try #require(LoginLimits.now(in: identifier == "Europe/London" ? "Asia/Tokyo" : "Etc/UTC"))
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: local.day, windows: LoginLimits.inside(away))],
                                  to: stack.limits)
            let outside = try await su()
            #expect(outside.status != 0 && !outside.standardOutput.contains(Self.marker), "\(outside.standardError)")
            #expect(outside.standardError.contains("You may not log in at this hour"), "\(outside.standardError)")
        }
    }

    /// The child types `su - CHILD` themself, with a TZ that would put the
    /// machine's clock inside their hours: su asks their password on the
    /// terminal, then refuses, in the machine's time.
    @Test func suTypedByTheChildWithATimeZoneOfTheirOwnAsksThePasswordAndStillRefuses() async throws {
        try await withStack { stack, child, _ in
            let password = try #require(child.password)
            let now = LoginLimits.now()
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day,
                                                           windows: LoginLimits.twelveHoursAway(now))],
                                  to: stack.limits)
            let asChild = ["/usr/bin/setpriv", "--reuid=\(child.uid)", "--regid=\(child.gid)", "--init-groups", "/usr/bin/env"]
            for zone in ["UTC-12", "UTC+12"] {
                let screen = try await onTerminal(stack, asChild + ["TZ=\(zone)", "/usr/bin/su", "-", child.name, "-s", "/bin/sh"],
                                                  secret: password)
                #expect(screen.contains("Password:"), "\(screen)")
                #expect(screen.contains("You may not log in at this hour: FamilyControls Demo set your login hours."), "\(screen)")
                #expect(!screen.contains(Self.marker), "\(screen)")
                #expect(!screen.contains(password))
            }
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: stack.limits)
            let screen = try await onTerminal(stack, asChild + ["TZ=UTC-12", "/usr/bin/su", "-", child.name, "-s", "/bin/sh"],
                                              secret: password)
            #expect(screen.contains(Self.marker), "\(screen)")
            #expect(!screen.contains(password))
        }
    }

    @Test func loginDashFOnATerminalShowsTheChildWhyAndWhenAndLetsThemInInsideTheirHours() async throws {
        try await withStack { stack, child, adult in
            let now = LoginLimits.now()
            let outside = LoginLimits.outside(now)
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)], to: stack.limits)
            let refused = try await onTerminal(stack, ["/usr/bin/login", "-f", child.name])
            #expect(refused.contains(LoginLimits.message(hours: true, again: outside.again, user: child.name)), "\(refused)")
            #expect(!refused.contains(Self.marker), "\(refused)")
            for user in [adult.name, "root"] {
                let screen = try await onTerminal(stack, ["/usr/bin/login", "-f", user])
                #expect(screen.contains(Self.marker), "\(user): \(screen)")
            }
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: stack.limits)
            let inside = try await onTerminal(stack, ["/usr/bin/login", "-f", child.name])
            #expect(inside.contains(Self.marker), "\(inside)")
            // A group-writable file is not believed: the child gets in.
            try LoginLimits.write(LoginLimits.header + "\n" + LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)
                                  + "\n", to: stack.limits, mode: 0o660)
            let untrusted = try await onTerminal(stack, ["/usr/bin/login", "-f", child.name])
            #expect(untrusted.contains(Self.marker), "\(untrusted)")
        }
    }

    @Test func aRealSSHServerRefusesAChildOutsideTheirHoursByPasswordOrKeyAndShowsThemWhy() async throws {
        try await withStack { stack, child, adult in
            let password = try #require(child.password)
            let logins = try SSHLogins(stack: stack, child: child, adult: adult)
            defer { logins.stop() }
            let server = logins.server
            func ssh(_ user: String, _ method: String) async throws -> ProcessResult { try await logins.ssh(user, method) }
            let methods = SSHLogins.methods

            let now = LoginLimits.now()
            let outside = LoginLimits.outside(now)
            try LoginLimits.write(lines: [LoginLimits.line(uid: 0, day: now.day, used: 1, daily: 0, windows: LoginLimits.windows(now, [:])),
                                          LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)],
                                  to: stack.limits)
            for method in methods {
                let refused = try await ssh(child.name, method)
                #expect(refused.status != 0, "\(method)")
                #expect(!refused.standardOutput.contains(Self.marker), "\(method)")
                #expect(refused.standardError.contains(LoginLimits.message(hours: true, again: outside.again, user: child.name)),
                        "\(method): \(refused.standardError)\n\(server.log.suffix(2000))")
                #expect(!refused.standardError.contains(password))
            }
            #expect(server.log.contains("Access denied for user \(child.name) by PAM account configuration"), "\(server.log)")
            for user in ["root", adult.name] {
                let allowed = try await ssh(user, "publickey")
                #expect(allowed.standardOutput.contains(Self.marker), "\(user): \(allowed.standardError)")
            }

            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: LoginLimits.inside(now))],
                                  to: stack.limits)
            for method in methods {
                let allowed = try await ssh(child.name, method)
                #expect(allowed.standardOutput.contains(Self.marker), "\(method): \(allowed.standardError)")
            }
            // A file of another owner: not believed, everyone in.
            try LoginLimits.write(lines: [LoginLimits.line(uid: child.uid, day: now.day, windows: outside.windows)], to: stack.limits)
            chown(stack.limits, adult.uid, adult.gid)
            let untrusted = try await ssh(child.name, "publickey")
            #expect(untrusted.standardOutput.contains(Self.marker), "\(untrusted.standardError)")
        }
    }
}

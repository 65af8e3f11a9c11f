import Foundation
import Testing
import TestSupport

private let loginToolsPresent = ["/usr/bin/unshare", "/usr/bin/su", "/usr/bin/login", "/usr/sbin/sshd", "/usr/bin/ssh",
                                  "/usr/bin/python3", "/usr/sbin/pam-auth-update"]
    .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

/// Limits a guardian sets with familyctl, written by the real Guard and kept
/// at every kind of real login (``RealLogins``: `su -`, `login -f` on a
/// pseudo-terminal, a real sshd by key, password and keyboard-interactive),
/// with the Guard running, stopped, and started again; and a day's time
/// spent in a real session keeps the next login out until a guardian gives more.
@Suite(.serialized, .enabled(if: canRunGuard && loginToolsPresent,
                             "needs root, the built products, unshare, su, login, sshd, ssh, python3 and pam-auth-update"))
struct TimeLimitsEveryLoginTests {
    private let marker = RealLogins.marker

    @Test func hoursAGuardianSetsKeepTheChildOutAtEveryLoginWithTheGuardRunningStoppedAndStartedAgain() async throws {
        try await withGuard { guardd in
            let child = guardd.child, adult = guardd.adult, app = GuardFixture.appID
            try await guardd.familyctl(["set", "--user", child.name, "--app", app, "approved"]).requireSuccess()
            let stack = try await PrivateLoginStack.make(socket: guardd.socket, limits: "\(guardd.stateDirectory)/login-limits")
            defer { stack.remove() }
            let logins = RealLogins(stack: stack)
            let ssh = try SSHLogins(stack: stack, child: child, adult: adult)
            defer { ssh.stop() }

            // One hour about twelve hours from now, in this machine's local time: not now, nor during the test.
            let start = (LoginLimits.now().minute / 60 + 12) % 24
            let hours = String(format: "Mon-Sun %02d:00-%02d:00", start, start + 1)
            try await guardd.familyctl(["limits", "set", "--user", child.name, "--app", app, "--hours", hours]).requireSuccess()
            let first = try await logins.su(child.name, until: false)
            #expect(!first.standardOutput.contains(marker), "the Guard never wrote the hours: \(guardd.log.suffix(1500))")

            for phase in ["running", "stopped", "started again"] {
                if phase == "stopped" { guardd.stop() }
                if phase == "started again" { try await guardd.start() }
                let refused = try await logins.su(child.name)
                #expect(refused.status != 0 && !refused.standardOutput.contains(marker), "\(phase): \(refused.standardOutput)")
                #expect(refused.standardError.contains("You may not log in at this hour: \(app)")
                        && refused.standardError.contains("log in again"), "\(phase): \(refused.standardError)")
                let screen = try await logins.loginDashF(child.name)
                #expect(screen.contains("You may not log in at this hour") && !screen.contains(marker), "\(phase): \(screen)")
                for method in SSHLogins.methods {
                    let remote = try await ssh.ssh(child.name, method)
                    #expect(remote.status != 0 && !remote.standardOutput.contains(marker), "\(phase), \(method)")
                    #expect(remote.standardError.contains("You may not log in at this hour"),
                            "\(phase), \(method): \(remote.standardError)")
                    #expect(!remote.standardError.contains(child.password ?? "\u{0}"))
                }
                // Root and everyone who is not a child get in at once, whatever the Guard is doing.
                for user in ["root", adult.name] {
                    let started = ContinuousClock.now
                    let allowed = try await logins.su(user)
                    let took = ContinuousClock.now - started
                    #expect(allowed.status == 0 && allowed.standardOutput.contains(marker), "\(phase), \(user): \(allowed.standardError)")
                    #expect(took < .seconds(10), "\(phase), \(user): \(took)")
                }
                #expect(try await ssh.ssh(adult.name, "publickey").standardOutput.contains(marker), "\(phase)")
                #expect(try await logins.loginDashF(adult.name).contains(marker), "\(phase)")
            }

            // Root widens the hours: the child gets in at every login.
            try await guardd.familyctl(["limits", "set", "--user", child.name, "--app", app, "--hours", "Mon-Sun 00:00-24:00"])
                .requireSuccess()
            let inside = try await logins.su(child.name, until: true)
            #expect(inside.status == 0 && inside.standardOutput.contains(marker), "\(inside.standardError)\n\(guardd.log.suffix(1500))")
            #expect(try await logins.loginDashF(child.name).contains(marker))
            for method in SSHLogins.methods {
                let remote = try await ssh.ssh(child.name, method)
                #expect(remote.standardOutput.contains(marker), "\(method): \(remote.standardError)")
            }
        }
    }

    /// The whole chain: a real session spends the day's 20 seconds, is warned
    /// and ended, the next login is refused as the day's time used up (also
    /// after the Guard starts again), and more time from a guardian lets the
    /// child back in.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: pamWrapperLibrary), "needs libpam-wrapper"))
    func aDaySpentInASessionKeepsTheNextLoginOutUntilAGuardianGivesMoreTime() async throws {
        try await withGuard { guardd in
            let child = guardd.child, app = GuardFixture.appID
            try await guardd.familyctl(["set", "--user", child.name, "--app", app, "approved"]).requireSuccess()
            let stack = try await PrivateLoginStack.make(socket: guardd.socket, limits: "\(guardd.stateDirectory)/login-limits")
            defer { stack.remove() }
            let logins = RealLogins(stack: stack)
            try await guardd.familyctl(["limits", "set", "--user", child.name, "--app", app, "--daily", "20s", "--at-end", "end"])
                .requireSuccess()
            #expect(try await logins.su(child.name, until: true).standardOutput.contains(marker), "20 s left: the child logs in")

            let sessions = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            let session = try sessions.login(child.name, "echo in; read line")
            defer { session.stop() }
            #expect(await eventually(timeout: .seconds(15)) { guardd.log.contains("time: \(child.name) warned") },
                    "\(guardd.log.suffix(3000))")
            #expect(await eventually(timeout: .seconds(60)) { !session.process.isRunning }, "\(guardd.log.suffix(3000))")

            for phase in ["running", "started again"] {
                if phase == "started again" {
                    guardd.stop()
                    try await guardd.start()
                }
                let refused = try await logins.su(child.name, until: false)
                #expect(refused.status != 0 && !refused.standardOutput.contains(marker), "\(phase)")
                #expect(refused.standardError.contains("Your time for today is used up: \(app)"), "\(phase): \(refused.standardError)")
                #expect(try await logins.su("root").standardOutput.contains(marker), "\(phase)")
            }

            try await guardd.familyctl(["limits", "more", "--user", child.name, "--minutes", "5"]).requireSuccess()
            let back = try await logins.su(child.name, until: true)
            #expect(back.status == 0 && back.standardOutput.contains(marker), "\(back.standardError)\n\(guardd.log.suffix(1500))")
        }
    }
}

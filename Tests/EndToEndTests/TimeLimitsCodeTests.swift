import Foundation
import Testing
import TestSupport

/// A parent or guardian's one-time code typed at the child's screen, for
/// time limits: more time up to the site's bound (`[Limits] MostTimeByCode=`),
/// and never a limit lifted or loosened. The real Guard, the shipped code
/// service (pam_oath), the demo app run as the child.
@Suite(.serialized, .enabled(if: canRunGuard && canUseOneTimeCodes,
                             "needs root, the built products, libpam-oath and oathtool (Config/install.sh installs them)"))
struct TimeLimitsCodeTests {
    @Test func aCodeAtTheChildsScreenGivesAtMostTheSitesBoundAndNeverLoosensALimit() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=0\n[Limits]\nMostTimeByCode=20m\n") { guardd in
            try await guardd.requestApproved()
            let codes = GuardianCodeTests()
            let enrolment = try await codes.enroll(guardd)
            try await guardd.app(["limits", "set", "--hours", "Mon-Sun 00:00-24:00", "--daily", "1h"]).requireSuccess()
            let guardian = guardd.guardian.name

            // 60 minutes asked, 20 given: the site's bound.
            let more = try await guardd.app(["more-time", "60", "--stdin"],
                                            input: "here\n\(guardian)\n\(codes.code(enrolment))\n")
            #expect(more.status == 0, "\(more.standardError)\n\(guardd.log)")
            #expect(more.standardError.contains("[continue/here/don't allow]"), "the alert offered the guardian here")
            #expect(more.standardOutput == "more time: 20 minutes given\n", "\(more.standardError)")
            #expect(try await extraSeconds(guardd) == 1200)

            // A looser setting, or none at all, never offers the code: it waits for a guardian elsewhere.
            for arguments in [["limits", "set", "--daily", "3h", "--stdin"], ["limits", "set", "--stdin"]] {
                let app = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                       arguments))
                app.write("here\n\(guardian)\n\(codes.code(enrolment, steps: 1))\n")
                _ = try await guardd.waitForPendingRequest()
                #expect(!app.standardError.contains("here/"), "\(app.standardError)")
                app.stop()
                for _ in 0..<100 {
                    if try await guardd.familyctlAsGuardian(["requests", "--json"]).standardOutput.contains("\"requests\":[]") { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            let limits = try #require(try await childLimits(guardd))
            #expect(limits["daily"] as? Int == 3600)
            #expect(limits["hours"] as? String == "Mon-Sun 00:00-24:00")
            #expect(limits["extra"] as? Int == 1200)
            let audit = try await guardd.auditRows().filter { $0.contains(" time ") }
            #expect(audit == ["\(guardian) time \(guardd.child.name) - granted"], "\(audit)")
        }
    }

    /// A child whose day is spent is refused at a real `su -` login; a code
    /// at their screen gives the site's bound of more time, and they get in.
    @Test(.enabled(if: ["/usr/bin/unshare", "/usr/bin/su", "/usr/sbin/pam-auth-update"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                   "needs unshare, su and pam-auth-update"))
    func aCodeAtTheChildsScreenLetsAChildWhoseDayIsSpentBackInForTheBoundedTime() async throws {
        try await withGuard(extraConfiguration: "MaxAttempts=1\nFailureDelay=0\n[Limits]\nMostTimeByCode=20m\n") { guardd in
            try await guardd.requestApproved()
            let codes = GuardianCodeTests()
            let enrolment = try await codes.enroll(guardd)
            let stack = try await PrivateLoginStack.make(socket: guardd.socket, limits: "\(guardd.stateDirectory)/login-limits")
            defer { stack.remove() }
            let logins = RealLogins(stack: stack)
            try await guardd.app(["limits", "set", "--daily", "0m"]).requireSuccess()
            let refused = try await logins.su(guardd.child.name, until: false)
            #expect(!refused.standardOutput.contains(RealLogins.marker), "the day is spent: \(guardd.log.suffix(1500))")
            #expect(refused.standardError.contains("Your time for today is used up"), "\(refused.standardError)")

            let more = try await guardd.app(["more-time", "60", "--stdin"],
                                            input: "here\n\(guardd.guardian.name)\n\(codes.code(enrolment))\n")
            #expect(more.standardOutput == "more time: 20 minutes given\n", "\(more.standardError)")
            let back = try await logins.su(guardd.child.name, until: true)
            #expect(back.status == 0 && back.standardOutput.contains(RealLogins.marker), "\(back.standardError)\n\(guardd.log.suffix(1500))")
            #expect(try await extraSeconds(guardd) == 1200)
        }
    }

    private func childLimits(_ guardd: GuardFixture) async throws -> [String: Any]? {
        let result = try await guardd.familyctl(["limits", "--json", "--user", guardd.child.name])
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        return (object?["children"] as? [[String: Any]])?.first
    }

    private func extraSeconds(_ guardd: GuardFixture) async throws -> Int? {
        try await childLimits(guardd)?["extra"] as? Int
    }
}

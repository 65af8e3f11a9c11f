import Foundation
import Testing
import TestSupport

/// Whether `familyctl limits` exists to set a child's limits: the tests of a
/// session that runs out of time set them with it.
let familyctlSetsLimits: Bool = {
    guard productExists("familyctl"),
          let result = try? TestSupport.run(productPath("familyctl"), ["limits", "--help"]) else { return false }
    return result.status == 0
}()

/// Time limits kept during a session, with the real Guard: the login-limits
/// file it writes for the PAM module, and a real child session opened
/// through PAM by `runuser -l` with the shipped session module (no logind
/// here, so the Guard ends a session by ending its processes).
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.fileExists(atPath: pamWrapperLibrary),
                             "needs root, the built products and libpam-wrapper"))
struct TimeLimitsSessionTests {
    /// The `child` line of `uid` in the Guard's login-limits file, split in fields.
    private func line(_ guardd: GuardFixture, uid: UInt32) -> [String]? {
        let text = (try? String(contentsOfFile: "\(guardd.stateDirectory)/login-limits", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            .first { $0.count > 8 && $0[0] == "child" && $0[1] == String(uid) }
    }

    @Test func theGuardWritesTheLoginLimitsFileAtStartRootsAloneAndAgainAfterARestart() async throws {
        try await withGuard { guardd in
            let path = "\(guardd.stateDirectory)/login-limits"
            #expect(await eventually { FileManager.default.fileExists(atPath: path) }, "\(guardd.log.suffix(2000))")
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("familycontrols-login-limits 1\n# written by familycontrolsd at "), "\(text)")
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.posixPermissions] as? Int == 0o600 && attributes[.ownerAccountID] as? Int == 0)
            // Removed while the Guard is stopped: written again at its next start.
            guardd.stop()
            try FileManager.default.removeItem(atPath: path)
            try await guardd.start()
            #expect(await eventually { FileManager.default.fileExists(atPath: path) }, "\(guardd.log.suffix(2000))")
        }
    }

    @Test(.enabled(if: familyctlSetsLimits, "needs `familyctl limits set` to set a child's daily time"))
    func aShortAllowanceWarnsThenEndsTheSessionAndTheFileSaysTheTimeIsUsedUpAcrossARestart() async throws {
        try await withGuard { guardd in
            let logins = try await TestLoginSessions.make(in: "\(guardd.directory)/pam", socket: guardd.socket)
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            try await guardd.familyctl(["limits", "set", "--user", guardd.child.name, "--app", GuardFixture.appID,
                                        "--daily", "20s", "--at-end", "end"]).requireSuccess()
            // Before the login: the Guard counts from the session's opening, before its shell says anything.
            let started = ContinuousClock.now
            let session = try logins.login(guardd.child.name, "echo in; read line")
            defer { session.stop() }
            #expect(await eventually { session.standardOutput.contains("in") }, "\(session.standardError)")
            // Warned (5 and 1 minutes before: at once, for 20 s), then ended.
            #expect(await eventually(timeout: .seconds(15)) { guardd.log.contains("time: \(guardd.child.name) warned") },
                    "\(guardd.log.suffix(3000))")
            #expect(await eventually(timeout: .seconds(40)) { !session.process.isRunning }, "\(guardd.log.suffix(3000))")
            let took = ContinuousClock.now - started
            #expect(took > .seconds(18), "the session ended after \(took)")
            #expect(guardd.log.contains("are ended: time is up for \(guardd.child.name)"), "\(guardd.log.suffix(3000))")
            // The file says the day's time is used up; so it does after the Guard starts again.
            let uid = guardd.child.uid
            #expect(await eventually { (line(guardd, uid: uid).flatMap { Int($0[3]) } ?? 0) >= 20 },
                    "\(String(describing: line(guardd, uid: uid)))")
            guardd.stop()
            try FileManager.default.removeItem(atPath: "\(guardd.stateDirectory)/login-limits")
            try await guardd.start()
            #expect(await eventually { (line(guardd, uid: uid).flatMap { Int($0[3]) } ?? 0) >= 20 },
                    "\(String(describing: line(guardd, uid: uid)))")
            let log = try await guardd.familyctl(["log", "--user", guardd.child.name]).requireSuccess().standardOutput
            #expect(log.contains("time") && log.contains("warned") && log.contains("ended"), "\(log)")
        }
    }
}

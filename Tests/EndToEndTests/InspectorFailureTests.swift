import Foundation
import SystemKit
import Testing
import TestSupport

/// The Guard when its inspector fails: one that hangs is killed at its
/// deadline, one that crashes is reaped; either way that one request fails,
/// saying why in the app's error and the Guard's log, and the Guard serves
/// the next call. Real Guard, real app as the child, a stand-in inspector
/// where the Guard looks for it first.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products (familycontrolsd, familyctl, familycontrols-demo)"))
struct InspectorFailureTests {
    static let failures: [(String, String, String)] = [
        ("hangs", "exec sleep 600", "did not answer in time and was killed"),
        ("crashes", "kill -SEGV $$", "ended with signal 11 before it answered"),
        ("answers garbage", "printf 'not json\\0'", "answered with a malformed reply"),
    ]

    @Test(arguments: 0..<failures.count)
    func aFailingInspectorFailsThatRequestAloneAndTheGuardServesOn(index: Int) async throws {
        let (what, script, logged) = Self.failures[index]
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            guardd.stop()
            try guardd.replaceInspector(with: script)
            try await guardd.start()
            let started = ContinuousClock.now
            let refused = try await guardd.app(["request", "--member", "child", "--stdin"], input: guardd.approvingInput)
            let took = ContinuousClock.now - started
            #expect(refused.status != 0, "an inspector that \(what) let the request through: \(refused.standardError)")
            #expect(!refused.standardError.contains("Allow “"), "no alert for an app the Guard could not identify")
            #expect(refused.standardError.contains("desktop entry"), "\(refused.standardError)")
            #expect(guardd.log.contains(logged), "\(what): \(guardd.log.suffix(2000))")
            // Killed at its 5 s deadline, not waited for (the hanging one sleeps
            // 600 s): 5.0 s alone, 55 s once on a two-core machine running the
            // whole suite; the log line above says it was killed.
            #expect(took < .seconds(120), "\(took)")
            #expect(try await guardd.storedStatus() == "notDetermined")
            // The Guard serves on: an administrator's call, then the app's own status.
            let status = try await guardd.familyctl(["status"])
            #expect(status.status == 0, "\(status.standardError)")
            let audit = try await guardd.auditRows()
            #expect(audit.contains { $0.contains(guardd.child.name) && $0.contains("request") && $0.hasSuffix(" failed") },
                    "the failed inspection is audited: \(audit)")
            #expect(guardd.process?.isRunning == true)
        }
    }
}

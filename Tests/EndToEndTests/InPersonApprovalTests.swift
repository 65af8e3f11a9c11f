import Foundation
import Testing
import TestSupport

/// Whether pam_oath (Debian libpam-oath) and oathtool are here.
let canUseOneTimeCodes: Bool = {
    let module = ["/lib/x86_64-linux-gnu/security/pam_oath.so", "/usr/lib/x86_64-linux-gnu/security/pam_oath.so",
                  "/lib/aarch64-linux-gnu/security/pam_oath.so", "/usr/lib/aarch64-linux-gnu/security/pam_oath.so"]
        .contains { FileManager.default.fileExists(atPath: $0) }
    return module && FileManager.default.isExecutableFile(atPath: "/usr/bin/oathtool")
}()

/// In-person approval in the child's app, the safe way: the guardian service
/// asks for a one-time code (pam_oath, an HOTP secret), which is useless to
/// the child once it has been used.
@Suite(.serialized, .enabled(if: canRunGuard && canUseOneTimeCodes,
                             "needs libpam-oath and oathtool (Debian packages; .ci/run installs them)"))
struct InPersonApprovalTests {
    static let secret = "3132333435363738393031323334353637383930"

    /// The code for HOTP counter `counter`, as the guardian's token shows it.
    private func code(_ counter: Int) async throws -> String {
        let result = try await run("/usr/bin/oathtool", ["--hotp", Self.secret, "-c", String(counter)])
        try result.requireSuccess()
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The guardian service asks the guardian for a one-time code, nothing else.
    private func useOneTimeCodes(_ guardd: GuardFixture) throws {
        let users = "\(guardd.directory)/users.oath"
        try "HOTP \(guardd.guardian.name) - \(Self.secret)\n".write(toFile: users, atomically: true, encoding: .utf8)
        chmod(users, 0o600)
        try """
            auth     required  pam_oath.so usersfile=\(users) window=5
            account  required  pam_permit.so
            """.write(toFile: "\(guardd.pamDirectory)/familycontrols-guardian", atomically: true, encoding: .utf8)
    }

    @Test func aCodeTypedInTheAppApprovesOnceAndIsRefusedWhenReplayed() async throws {
        try await withGuard(extraConfiguration: "InSessionApproval=yes\nMaxAttempts=1\nFailureDelay=0") { guardd in
            try useOneTimeCodes(guardd)
            let second = try guardd.installDemo(for: guardd.child, appID: "org.example.Second")
            let first = try await code(0)

            let approved = try await guardd.app(["request", "--member", "child", "--stdin"],
                                                input: "continue\n\(guardd.guardian.name)\n\(first)\n")
            #expect(approved.status == 0, "\(approved.standardError)")
            #expect(approved.standardError.contains("\(guardd.guardian.name)'s one-time code (the 6 digits"),
                    "the guardian service asked for the code: \(approved.standardError)")
            #expect(try await guardd.storedStatus() == "approved")

            // The child saw the code go by; it is worth nothing now.
            let replayed = try await guardd.app(["request", "--member", "child", "--stdin"],
                                                input: "continue\n\(guardd.guardian.name)\n\(first)\n",
                                                executable: second + "/familycontrols-demo")
            #expect(replayed.status == 1)
            #expect(replayed.standardError.contains("error 5 authorizationCanceled"))
            #expect(try await guardd.storedStatus(appID: "org.example.Second") == "notDetermined")

            let next = try await guardd.app(["request", "--member", "child", "--stdin"],
                                            input: "continue\n\(guardd.guardian.name)\n\(try await code(1))\n",
                                            executable: second + "/familycontrols-demo")
            #expect(next.status == 0, "\(next.standardError)")
        }
    }

    @Test func withoutInSessionApprovalTheAppNeverAsksForTheGuardian() async throws {
        try await withGuard { guardd in
            try useOneTimeCodes(guardd)
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            #expect(!app.standardError.contains("Parent or guardian's user name"))
            #expect(!app.standardError.contains("one-time code (the 6 digits"))
            // The guardian's own session uses the same service: their code, on their terminal.
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: "\(try await code(0))\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0)
        }
    }
}

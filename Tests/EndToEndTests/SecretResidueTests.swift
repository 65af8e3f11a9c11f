import Foundation
import Testing
import TestSupport

/// A password the Guard was given is gone from its memory once the approval
/// is done: it travelled as bytes (never a `String`), and every buffer that
/// held it (the socket read buffer, the frame, the parsed value, the PAM
/// reply) was zeroed. Read from outside, through `/proc/PID/mem`. PAM itself
/// ran in a helper process, which zeroes what it received and is gone once
/// the approval is done: no process of the Guard's is left holding it.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct SecretResidueTests {
    @Test func theGuardiansPasswordLeavesNoCopyInTheGuardsMemory() async throws {
        try await withGuard { guardd in
            let pid = try #require(guardd.process?.processIdentifier)
            let password = try #require(guardd.guardian.password)
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"], input: password + "\n")
                .requireSuccess()
            #expect(await app.exitStatus() == 0, "\(app.standardError)")

            // The scan can see what the Guard holds: the names it works with.
            let control = try ProcessMemory.regions(of: pid, containing: Array(guardd.child.name.utf8))
            #expect(!control.isEmpty, "the scan found not even the child's name: is it reading the Guard's memory?")
            let copies = try ProcessMemory.regions(of: pid, containing: Array(password.utf8))
            #expect(copies.isEmpty, "the guardian's password lingers in the Guard's memory: \(copies)")
            let helpers = try Self.children(of: pid)
            #expect(helpers.isEmpty, "a PAM helper that held the password still runs: \(helpers)")
        }
    }

    @Test func aWrongPasswordLeavesNoCopyEither() async throws {
        try await withGuard(extraConfiguration: "FailureDelay=0") { guardd in
            let pid = try #require(guardd.process?.processIdentifier)
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()
            let wrong = (1...3).map { _ in randomPassword() }
            let result = try await guardd.familyctlAsGuardian(["approve", String(id), "--stdin"],
                                                              input: wrong.joined(separator: "\n") + "\n")
            #expect(result.status == 1)
            let helpers = try Self.children(of: pid)
            #expect(helpers.isEmpty, "a PAM helper that held the passwords still runs: \(helpers)")
            for (index, attempt) in wrong.enumerated() {
                let copies = try ProcessMemory.regions(of: pid, containing: Array(attempt.utf8))
                #expect(copies.isEmpty, "wrong password \(index + 1) lingers in the Guard's memory: \(copies)")
            }
        }
    }

    /// The processes the Guard started that still run (`/proc/PID/task/TID/children`).
    static func children(of pid: Int32) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").map(String.init)
        }
    }
}

import Foundation
import Testing
import TestSupport

/// `familyctl authenticate` as a real process, through the shipped pam.d files
/// and real users.
@Suite(.serialized, .enabled(if: canManageUsers, "needs root to create throwaway users"),
       .enabled(if: productExists("familyctl"), "run `swift build` first: the test runs the real familyctl binary"))
struct FamilyCtlAuthenticateTests {
    let familyctl = productPath("familyctl")

    @Test(arguments: ["child", "individual"])
    func rightPasswordOnStandardInputSucceeds(member: String) async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let password = try #require(user.password)
                let result = try await run(familyctl, ["authenticate", user.name, "--member", member, "--stdin", "--pam-dir", pamDir],
                                     input: "\(password)\n")
                #expect(result.status == 0)
                let service = member == "child" ? "familycontrols-guardian" : "familycontrols-individual"
                #expect(result.standardOutput == "familyctl: \(user.name) authenticated on the \(service) service\n")
                #expect(result.standardError.contains("Password:"))
                #expect(!result.standardOutput.contains(password) && !result.standardError.contains(password))
            }
        }
    }

    /// libpam, and the libaudit and libcap-ng it brings, are loaded at the
    /// first transaction: a verb that authenticates nobody never maps them.
    @Test func onlyAVerbThatAuthenticatesLoadsLibpam() async throws {
        // The loader names each library it maps, and why (ld.so(8)).
        let loads: [String: String?] = ["LD_DEBUG": "files"]
        let status = try await run(familyctl, ["status", "--socket", "/nonexistent/guard.socket"], environment: loads)
        #expect(status.status != 0 && status.standardError.contains("file=libc.so.6"), "\(status.standardError)")
        #expect(!status.standardError.contains("libpam"), "\(status.standardError)")
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let password = try #require(user.password)
                let result = try await run(familyctl, ["authenticate", user.name, "--member", "child", "--stdin", "--pam-dir", pamDir],
                                           input: "\(password)\n", environment: loads)
                #expect(result.status == 0)
                let lines = result.standardError.split(separator: "\n").filter { $0.contains("file=libpam.so.0") }
                #expect(lines.contains { $0.contains("dynamically loaded by") }, "\(lines)")
                #expect(!lines.contains { $0.contains("needed by") }, "\(lines)")
            }
        }
    }

    @Test func wrongPasswordFailsWithAClearMessage() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let result = try await run(familyctl, ["authenticate", user.name, "--member", "child", "--stdin", "--pam-dir", pamDir],
                                     input: "definitely-wrong\n")
                #expect(result.status == 1)
                #expect(result.standardError.contains(
                    "familyctl: familycontrols-guardian: authentication failure for \(user.name): incorrect password"))
                #expect(result.standardOutput.isEmpty)
            }
        }
    }

    @Test func endOfInputCancels() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                let result = try await run(familyctl, ["authenticate", user.name, "--member", "individual", "--stdin", "--pam-dir", pamDir],
                                     input: "")
                #expect(result.status == 1)
                #expect(result.standardError.contains("authentication of \(user.name) canceled"))
            }
        }
    }

    @Test func configuredServiceNameIsUsed() async throws {
        try await withShippedPAMDirectory { pamDir in
            try await withThrowawayUser { user in
                try "auth required pam_deny.so\naccount required pam_permit.so\n"
                    .write(toFile: "\(pamDir)/site-guardian", atomically: true, encoding: .utf8)
                let config = "\(pamDir)/fc.conf"
                try "[Authentication]\nGuardianService=site-guardian\n".write(toFile: config, atomically: true, encoding: .utf8)
                let result = try await run(familyctl, ["authenticate", user.name, "--member", "child", "--stdin",
                                                 "--pam-dir", pamDir, "--config", config], input: "\(user.password ?? "")\n")
                #expect(result.status == 1)
                #expect(result.standardError.contains("site-guardian: authentication failure"))
            }
        }
    }

    @Test func refusesToRunWithoutRoot() async throws {
        let result = try await run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                  familyctl, "authenticate", "root", "--member", "child", "--stdin"])
        #expect(result.status == 4)
        #expect(result.standardError == "familyctl: this command must be run as root (try: sudo familyctl authenticate …)\n")
    }

    @Test(arguments: [
        (["authenticate"], "familyctl: authenticate needs a user name"),
        (["authenticate", "bob"], "familyctl: authenticate needs --member child or --member individual"),
        (["authenticate", "bob", "--member", "parent"], "familyctl: --member expects child or individual, found \"parent\""),
        (["authenticate", "bob", "--member"], "familyctl: --member needs a value"),
        (["authenticate", "bob", "--member", "child", "--bogus"], "familyctl: unknown option --bogus"),
        (["frobnicate"], "familyctl: unknown verb \"frobnicate\""),
    ])
    func usageErrorsExitTwo(arguments: [String], message: String) async throws {
        let result = try await run(familyctl, arguments)
        #expect(result.status == 2)
        #expect(result.standardError.hasPrefix(message + "\n"))
    }

    @Test func invalidConfigurationExitsThree() async throws {
        try await withTemporaryDirectory { directory in
            let config = "\(directory)/bad.conf"
            try "[Family]\nKids=alice\n".write(toFile: config, atomically: true, encoding: .utf8)
            let result = try await run(familyctl, ["authenticate", "root", "--member", "child", "--stdin", "--config", config])
            #expect(result.status == 3)
            #expect(result.standardError == "familyctl: \(config):2: unknown key \"Kids\" in [Family] (expected Guardians, Children or ApprovedApps)\n")
        }
    }

    @Test func helpDescribesTheVerb() async throws {
        let result = try await run(familyctl, ["--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("authenticate USER --member child|individual"))
    }
}

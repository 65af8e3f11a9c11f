import Foundation
import Testing
import TestSupport

/// Who is calling comes from the kernel and the executable, never from the message.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct GuardIdentityTests {
    @Test func executableOutsideAManagedAppDirectoryIsRefused() async throws {
        try await withGuard { guardd in
            let outside = "\(guardd.directory)/elsewhere/familycontrols-demo"
            try FileManager.default.createDirectory(atPath: "\(guardd.directory)/elsewhere", withIntermediateDirectories: true)
            try copyProgram(productPath("familycontrols-demo"), to: outside)
            chmod(outside, 0o755)
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n", executable: outside)
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 3 invalidArgument"))
            #expect(result.standardError.contains("is not in a managed app directory"))
        }
    }

    @Test func appWithoutTheCapabilityIsRefused() async throws {
        try await withGuard { guardd in
            try guardd.installDemo(for: guardd.child, appID: "org.example.NoCapability", capability: false)
            let executable = "\(guardd.appsRoot)/\(guardd.child.name)/org.example.NoCapability/familycontrols-demo"
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n", executable: executable)
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 3 invalidArgument"))
            #expect(result.standardError.contains("does not declare the Family Controls capability"))
        }
    }

    @Test(arguments: ["LD_PRELOAD", "LD_LIBRARY_PATH"])
    func processWithInjectedLibrariesIsRefused(variable: String) async throws {
        try await withGuard { guardd in
            let value = variable == "LD_PRELOAD" ? "libc.so.6" : "/tmp"
            let result = try await guardd.app(["request", "--member", "child", "--stdin"], input: "continue\n",
                                        environment: [variable: value])
            #expect(result.status == 1)
            #expect(result.standardError.contains("error 3 invalidArgument"))
            #expect(result.standardError.contains("runs with \(variable) set"))
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
                   "needs strace (Debian package strace; .ci/run installs it) to trace the app"))
    func tracedProcessIsRefused() async throws {
        let strace = "/usr/bin/strace"
        try await withGuard { guardd in
            let result = try await run("/usr/bin/setpriv", ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                                      "/usr/bin/env", "-i", "FAMILYCONTROLS_SOCKET=\(guardd.socket)",
                                                      strace, "-f", "-o", "/dev/null", guardd.appExecutable,
                                                      "request", "--member", "child", "--stdin"], input: "continue\n")
            #expect(result.status == 1)
            #expect(result.standardError.contains("is being traced"))
        }
    }

    @Test func twoAppsOfOneUserAreKeptApart() async throws {
        try await withGuard { guardd in
            try guardd.installDemo(for: guardd.child, appID: "org.example.Second")
            let second = "\(guardd.appsRoot)/\(guardd.child.name)/org.example.Second/familycontrols-demo"
            try await guardd.requestApproved().requireSuccess()
            let other = try await guardd.app(["status"], executable: second)
            #expect(other.standardOutput == "status: notDetermined\n")
            #expect(try await guardd.storedStatus(appID: "org.example.Second") == "notDetermined")
            #expect(try await guardd.storedStatus() == "approved")
            // The second app needs its own approval: the alert is shown again.
            let asked = try await guardd.app(["request", "--member", "child", "--stdin"], input: "n\n", executable: second)
            #expect(asked.standardError.contains("Allow “FamilyControls Demo”"))
            #expect(try await guardd.storedStatus(appID: "org.example.Second") == "denied")
            #expect(try await guardd.storedStatus() == "approved")
        }
    }
}

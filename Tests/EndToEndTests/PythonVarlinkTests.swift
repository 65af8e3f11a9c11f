import Foundation
import Testing
import TestSupport

/// An independent Varlink client (the `varlink` package from PyPI) talks to the Guard.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"),
       .enabled(if: pythonHasVarlink, "needs python3 with the varlink package (pip install varlink; .ci/run installs it)"))
struct PythonVarlinkTests {
    @Test func pythonClientIntrospectsAndReadsAStatus() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let script = """
                import sys, varlink
                with varlink.Client(address="unix:" + sys.argv[1]) as client:
                    with client.open("org.varlink.service") as service:
                        info = service.GetInfo()
                        print("interfaces", " ".join(info["interfaces"]))
                        text = service.GetInterfaceDescription("org.familycontrols.guard")["description"]
                        print("described", "method GetStatus" in text)
                    # Opening the interface makes the client parse our description.
                    with client.open("org.familycontrols.guard") as guard:
                        for row in guard.ListAuthorizations(sys.argv[2])["authorizations"]:
                            print("status", row["user"], row["app"], row["status"])
                """
            let result = try await run(pythonPath, ["-c", script, guardd.socket, guardd.child.name])
            #expect(result.status == 0, "\(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.contains("interfaces org.varlink.service org.familycontrols.guard"))
            #expect(lines.contains("described True"))
            #expect(lines.contains("status \(guardd.child.name) \(GuardFixture.appID) approved"))
        }
    }
}

let pythonPath: String = {
    let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map { "\($0)/python3" }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/python3"
}()

var pythonHasVarlink: Bool {
    (try? run(pythonPath, ["-c", "import varlink"]))?.succeeded == true
}

import Foundation
import Testing
import TestSupport

/// `familyctl agent` runs in a program of its own, `familycontrols-agent`,
/// which familyctl becomes (the same process, the same arguments): the only
/// one that loads libsystemd for the session bus. familyctl finds it beside
/// itself (a build folder) or in `../libexec/familycontrols/` (as installed).
@Suite struct AgentProgramTests {
    /// Copies of the built programs at `paths` under `root`, the agent's
    /// answer to `agent` without a session bus.
    private func agentRun(_ root: String, familyctl: String, agent: String?) async throws -> ProcessResult {
        for (product, path) in [("familyctl", familyctl), ("familycontrols-agent", agent)] {
            guard let path else { continue }
            let target = "\(root)/\(path)"
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try copyProgram(productPath(product), to: target)
        }
        return try await run("\(root)/\(familyctl)", ["agent", "--socket", "\(root)/no-guard.socket"],
                             environment: ["DBUS_SESSION_BUS_ADDRESS": String?.none, "XDG_RUNTIME_DIR": String?.none])
    }

    @Test func familyctlAgentBecomesTheAgentProgramInstalledInLibexec() async throws {
        try await withTemporaryDirectory { root in
            let result = try await agentRun(root, familyctl: "usr/bin/familyctl",
                                            agent: "usr/libexec/familycontrols/familycontrols-agent")
            // The agent's own answers: no session bus, so the requests here; no Guard at the socket.
            #expect(result.standardError.contains("no desktop notifications (no session bus)"), "\(result.standardError)")
            #expect(result.status == 5, "\(result.status) \(result.standardError)")
        }
    }

    @Test func familyctlAgentWithoutTheAgentProgramSaysWhereItLooked() async throws {
        try await withTemporaryDirectory { root in
            let result = try await agentRun(root, familyctl: "usr/bin/familyctl", agent: nil)
            #expect(result.status == 1)
            #expect(result.standardError.contains("the desktop agent is not installed: no familycontrols-agent in "
                + "\(root)/usr/bin/familycontrols-agent or \(root)/usr/libexec/familycontrols/familycontrols-agent"),
                "\(result.standardError)")
        }
    }
}

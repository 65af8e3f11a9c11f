import Foundation
import Testing
import TestSupport

/// The administrators' guide's install recipe (docs/administrators.md), run as written: its lines that
/// install the demo app for a child, run by root for a real child whose home
/// the child owns, then the child's own moves on that install.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct ReadmeRecipeTests {
    @Test func theReadmesInstallLeavesTheChildAbleToStageAnUpdateAndRemoveTheAppAfterARevoke() async throws {
        try await withGuard { guardd in
            let home = "\(guardd.homesRoot)/\(guardd.child.name)"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            chmod(guardd.homesRoot, 0o755)
            try await sh("chown \(guardd.child.name):\(guardd.child.name) '\(home)'").requireSuccess()
            // What install.sh puts in /usr/local/lib/familycontrols/demo.
            let demo = "\(guardd.directory)/demo"
            try FileManager.default.createDirectory(atPath: demo, withIntermediateDirectories: true)
            try copyProgram(productPath("familycontrols-demo"), to: "\(demo)/familycontrols-demo")
            try FileManager.default.copyItem(atPath: "\(packageRoot)/Config/demo/org.familycontrols.Demo.desktop",
                                             toPath: "\(demo)/org.familycontrols.Demo.desktop")
            chmod(demo, 0o755)

            let recipe = try Self.installLines()
            #expect(recipe.count == 2, "the recipe's install lines: \(recipe)")
            for line in recipe {
                let command = line.replacingOccurrences(of: "/home/alice", with: home)
                    .replacingOccurrences(of: "/usr/local/lib/familycontrols/demo", with: demo)
                    .replacingOccurrences(of: "alice", with: guardd.child.name)
                try await run("/bin/sh", ["-c", command]).requireSuccess()
            }
            let app = "\(home)/Applications/\(GuardFixture.appID)"
            try await guardd.requestApproved(executable: "\(app)/familycontrols-demo").requireSuccess()

            // Staging an update is making a folder beside the approved one, as the child.
            let staged = try await guardd.shell("cp -a '\(app)' '\(home)/Applications/.\(GuardFixture.appID).update'")
            #expect(staged.status == 0, "the child cannot stage an update: \(staged.standardError)")

            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID]).requireSuccess()
            let removed = try await guardd.shell("rm -rf '\(app)'")
            #expect(removed.status == 0, "the child cannot remove the revoked app: \(removed.standardError)")
            #expect(!FileManager.default.fileExists(atPath: app))
        }
    }

    /// The commands under "# Install the demo app for alice" in the
    /// administrators' guide (docs/administrators.md), up to the next blank line.
    static func installLines() throws -> [String] {
        let readme = try String(contentsOfFile: "\(packageRoot)/docs/administrators.md", encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("# Install the demo app for alice") }) else {
            throw FixtureError("docs/administrators.md has no recipe that installs the demo app for alice")
        }
        return Array(lines[start...].prefix { !$0.isEmpty }.filter { !$0.hasPrefix("#") })
    }
}

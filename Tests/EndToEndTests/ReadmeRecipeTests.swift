import Foundation
import Testing
import TestSupport

/// The README's recipe for administrators, run as it is written there: the
/// demo installed for a child by its `install` lines, then approved,
/// updated and revoked as the README says.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root and the built products"))
struct ReadmeRecipeTests {
    /// The shell lines under "# Install the demo app for alice", up to the
    /// next blank line, for `child` whose home is `home`, with the demo taken
    /// from `demo` (what install.sh puts in /usr/local/lib/familycontrols/demo).
    /// Run as root, so each line's leading `sudo` is dropped.
    static func installRecipe(child: String, home: String, demo: String) throws -> String {
        let readme = try String(contentsOfFile: "\(packageRoot)/README.md", encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("# Install the demo app for alice") },
                                 "the README no longer has the demo's install recipe")
        let recipe = lines[start...].prefix { !$0.isEmpty }.filter { !$0.hasPrefix("#") }
        #expect(!recipe.isEmpty)
        return recipe.map { line in
            var text = String(line)
            if text.hasPrefix("sudo ") { text.removeFirst("sudo ".count) }
            return text.replacingOccurrences(of: "/usr/local/lib/familycontrols/demo", with: demo)
                .replacingOccurrences(of: "/home/alice", with: home)
                .replacingOccurrences(of: "alice", with: child)
        }.joined(separator: "\n")
    }

    /// Installed by the recipe, the child's app root is the child's: after
    /// approval the child stages an update beside the app, and after a
    /// revoke the child removes the app and the app root is theirs to keep.
    @Test func theReadmesRecipeLeavesTheAppRootTheChilds() async throws {
        try await withGuard { guardd in
            let child = guardd.child
            let home = "\(guardd.homesRoot)/\(child.name)"
            let demo = "\(guardd.directory)/demo"
            try await TestSupport.sh("""
                set -e
                mkdir -p '\(demo)'
                install -m 0755 '\(productPath("familycontrols-demo"))' '\(demo)/familycontrols-demo'
                install -m 0644 '\(packageRoot)/Config/demo/org.familycontrols.Demo.desktop' '\(demo)/'
                install -d -m 0755 '\(guardd.homesRoot)'
                install -d -m 0700 -o \(child.name) -g \(child.name) '\(home)'
                """).requireSuccess()
            let recipe = try Self.installRecipe(child: child.name, home: home, demo: demo)
            try await TestSupport.sh("set -e\n" + recipe).requireSuccess()

            var status = stat()
            #expect(lstat("\(home)/Applications", &status) == 0)
            #expect(status.st_uid == child.uid, "the recipe made the app root someone else's")
            let app = "\(home)/Applications/\(GuardFixture.appID)"
            try await guardd.requestApproved(executable: "\(app)/familycontrols-demo").requireSuccess()
            #expect(try await guardd.storedStatus() == "approved")

            let staged = try await guardd.shell("cp -a '\(app)' '\(home)/Applications/.\(GuardFixture.appID).update'")
            #expect(staged.status == 0, "the child cannot stage an update: \(staged.standardError)")
            _ = try await guardd.shell("rm -rf '\(home)/Applications/.\(GuardFixture.appID).update'")

            try await guardd.familyctl(["revoke", "--user", child.name, "--app", GuardFixture.appID]).requireSuccess()
            let removed = try await guardd.shell("rm -rf '\(app)'")
            #expect(removed.status == 0, "the child cannot remove the app after the revoke: \(removed.standardError)")
            #expect(!FileManager.default.fileExists(atPath: app))
        }
    }
}

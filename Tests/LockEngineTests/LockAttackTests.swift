import TestSupport
import LockEngine
import Testing

/// One thing a child might try against its locked app, run as a real process.
struct LockAttack: Sendable, CustomStringConvertible {
    var description: String
    /// Whether the command changes nothing even when it succeeds (a chown to
    /// the owner it already has).
    var changesNothingUnlocked = false
    var command: @Sendable (LockSandbox) -> [String]

    static let all: [LockAttack] = [
        LockAttack(description: "rm -rf the app directory") { ["rm", "-rf", $0.app] },
        LockAttack(description: "rm a nested file") { ["rm", "-f", $0.app(LockAppTree.deepFile)] },
        LockAttack(description: "rmdir an empty nested directory") { ["rmdir", $0.app(LockAppTree.emptyDirectory)] },
        LockAttack(description: "mv the app directory elsewhere") { ["mv", $0.app, $0.home + "/Moved"] },
        LockAttack(description: "mv the app directory within its parent") { ["mv", $0.app, $0.applications + "/Other"] },
        LockAttack(description: "mv a file out") { ["mv", $0.app(LockAppTree.dataFile), $0.home + "/data.txt"] },
        LockAttack(description: "mv a directory out") { ["mv", $0.app("lib"), $0.home + "/lib"] },
        LockAttack(description: "rename the symbolic link") { ["mv", $0.app(LockAppTree.link), $0.app("link2")] },
        LockAttack(description: "truncate -s 0 the executable") { ["truncate", "-s", "0", $0.app(LockAppTree.executable)] },
        LockAttack(description: "overwrite the executable") { ["sh", "-c", "echo x > '\($0.app(LockAppTree.executable))'"] },
        LockAttack(description: "append to a file") { ["sh", "-c", "echo x >> '\($0.app(LockAppTree.dataFile))'"] },
        LockAttack(description: "chmod a+w a file") { ["chmod", "a+w", $0.app(LockAppTree.dataFile)] },
        LockAttack(description: "chmod a+w the app directory") { ["chmod", "a+w", $0.app] },
        LockAttack(description: "chown a file to the child", changesNothingUnlocked: true) { ["chown", $0.child.name, $0.app(LockAppTree.dataFile)] },
        LockAttack(description: "create a new file inside") { ["sh", "-c", "echo x > '\($0.app("new.txt"))'"] },
        LockAttack(description: "mkdir inside") { ["mkdir", $0.app("lib/newdir")] },
        LockAttack(description: "hard-link a file out, then delete the original") {
            ["sh", "-c", "ln '\($0.app(LockAppTree.dataFile))' '\($0.home)/hard' && rm -f '\($0.app(LockAppTree.dataFile))'"]
        },
        LockAttack(description: "replace a file with a symlink") { ["ln", "-sf", "/etc/passwd", $0.app(LockAppTree.dataFile)] },
        LockAttack(description: "replace the symlink") { ["ln", "-sfn", "/etc/passwd", $0.app(LockAppTree.link)] },
    ]
}

@Suite("A locked app resists the child", .enabled(if: lockTestsCanRun, "needs root: creates users, chowns, sets inode flags"))
struct LockAttackTests {
    @Test("each attack fails and changes nothing", arguments: LockAttack.all)
    func attackFails(_ attack: LockAttack) async throws {
        try await withLockScenario { scenario in
            let command = attack.command(scenario.sandbox)
            try scenario.lock()
            let before = try TreeSnapshot.take(scenario.sandbox.home)
            let result = try scenario.child.run(command)
            #expect(!result.succeeded, "\(command) succeeded: \(result)")
            let after = try TreeSnapshot.take(scenario.sandbox.home)
            #expect(after == before, "\(attack) changed the tree")
        }
    }

    @Test("the same attacks succeed without the lock, so each one is a real test", arguments: LockAttack.all)
    func attackWorksUnlocked(_ attack: LockAttack) async throws {
        try await withLockScenario { scenario in
            let command = attack.command(scenario.sandbox)
            let before = try TreeSnapshot.take(scenario.sandbox.home)
            let result = try scenario.child.run(command)
            let after = try TreeSnapshot.take(scenario.sandbox.home)
            #expect(result.succeeded, "\(command): \(result)")
            #expect(attack.changesNothingUnlocked || after != before)
        }
    }
}

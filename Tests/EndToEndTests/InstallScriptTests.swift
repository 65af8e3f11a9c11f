import Foundation
import Testing
import TestSupport

/// `Config/install.sh` into a staged tree (DESTDIR) and `--uninstall` out of
/// it: nothing left behind, an administrator's edits and the store kept
/// unless `--purge`, and no uninstall while the Guard still locks an app
/// unless `--force`.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct InstallScriptTests {
    /// What install.sh puts under PREFIX=/usr/local and /etc.
    static let installed = [
        "usr/local/sbin/familycontrolsd", "usr/local/bin/familyctl",
        "usr/local/lib/familycontrols/demo/familycontrols-demo",
        "usr/local/lib/familycontrols/demo/org.familycontrols.Demo.desktop",
        "usr/local/share/familycontrols/org.familycontrols.guard.varlink",
        "usr/local/share/man/man8/familycontrolsd.8", "usr/local/share/man/man8/familyctl.8",
        "usr/local/share/man/man5/familycontrols.conf.5",
        "usr/local/share/bash-completion/completions/familyctl",
        "etc/pam.d/familycontrols-guardian", "etc/pam.d/familycontrols-individual", "etc/pam.d/familycontrols-guardian-code",
        "etc/familycontrols/familycontrols.conf", "etc/flatpak/installations.d/familycontrols.conf",
        "etc/xdg/autostart/familycontrols-agent.desktop",
        "etc/systemd/system/familycontrolsd.service", "etc/systemd/system/familycontrolsd.socket",
        "etc/systemd/system/familycontrols-flatpak@.service", "etc/systemd/system/familycontrols-flatpak.socket",
    ]

    /// install.sh (or --uninstall with `options`) with DESTDIR=`root`, PREFIX=/usr/local.
    private func installScript(_ root: String, _ options: [String] = [], environment: [String: String?] = [:]) async throws -> ProcessResult {
        _ = try await ReleaseBuild.binDirectory()  // built once, for every test here
        var env = environment
        env["DESTDIR"] = root
        env["PREFIX"] = "/usr/local"
        if env["FAMILYCONTROLS_SOCKET"] == nil { env["FAMILYCONTROLS_SOCKET"] = .some(nil) }
        return try await run("\(packageRoot)/Config/install.sh", options.isEmpty ? ["--no-packages"] : options, environment: env)
    }

    /// Every file and link under `root`, relative, sorted.
    private func files(under root: String) throws -> [String] {
        let result = try TestSupport.run("/usr/bin/find", [root, "(", "-type", "f", "-o", "-type", "l", ")", "-printf", "%P\\n"])
        return result.standardOutput.split(separator: "\n").map(String.init).sorted()
    }

    @Test func installingIntoAStagedTreeAndUninstallingLeavesNothingBehind() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            let install = try await installScript(root)
            #expect(install.status == 0, "\(install.standardError)")
            #expect(try files(under: root) == Self.installed.sorted())
            let unit = try String(contentsOfFile: "\(root)/etc/systemd/system/familycontrolsd.service", encoding: .utf8)
            #expect(unit.contains("\nExecStart=/usr/local/sbin/familycontrolsd\n"))
            // The staged programs run on their own: the runtime is in them.
            let help = try await NoToolchain.sh(#""$1" --help"#, ["\(root)/usr/local/bin/familyctl"])
            #expect(help.status == 0 && help.standardOutput.hasPrefix("usage: familyctl"), "\(help.standardError)")

            let uninstall = try await installScript(root, ["--uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.standardError)")
            #expect(try files(under: root) == [])
            for folder in ["usr/local/lib/familycontrols", "usr/local/share/familycontrols", "usr/local/share/bash-completion", "etc/familycontrols"] {
                #expect(!FileManager.default.fileExists(atPath: "\(root)/\(folder)"), "\(folder) left behind")
            }
        }
    }

    @Test func uninstallKeepsAnEditedConfigurationAndTheStoreUntilPurge() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            try await installScript(root).requireSuccess()
            let config = "\(root)/etc/familycontrols/familycontrols.conf"
            try "[Family]\n# edited by the administrator\n".write(toFile: config, atomically: false, encoding: .utf8)
            // A real store, made by the staged Guard itself.
            let state = "\(root)/var/lib/familycontrols"
            try FileManager.default.createDirectory(atPath: "\(root)/var/lib", withIntermediateDirectories: true)
            let made = try await NoToolchain.sh(#"""
                "$1/usr/local/sbin/familycontrolsd" --socket "$2/s" --state-dir "$3" --config "$4" 2>/dev/null &
                tries=0
                until [ -S "$2/s" ] || [ "$tries" -gt 200 ]; do sleep 0.05; tries=$((tries + 1)); done
                kill $! && wait $!
                test -e "$3/familycontrols.db"
                """#, [root, directory, state, config])
            #expect(made.status == 0, "\(made.standardError)")

            let uninstall = try await installScript(root, ["--uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.standardError)")
            #expect(uninstall.standardOutput.contains("kept your \(config) (--purge removes it)"), "\(uninstall.standardOutput)")
            #expect(uninstall.standardOutput.contains("kept the Guard's store, \(state)"), "\(uninstall.standardOutput)")
            let left = try files(under: root)
            #expect(left.allSatisfy { $0 == "etc/familycontrols/familycontrols.conf" || $0.hasPrefix("var/lib/familycontrols/") },
                    "\(left)")
            #expect(try String(contentsOfFile: config, encoding: .utf8).contains("edited by the administrator"))

            // The programs are gone, so nothing can read the store: whether it
            // records a lock is unknown, and only --force deletes it.
            let unknown = try await installScript(root, ["--uninstall", "--purge"])
            #expect(unknown.status == 1)
            #expect(unknown.standardError.contains("cannot ask whether the store in \(state) records a lock"), "\(unknown.standardError)")
            #expect(unknown.standardError.contains("To uninstall anyway, leaving any locked folder locked: Config/install.sh --uninstall --force"), "\(unknown.standardError)")
            #expect(FileManager.default.fileExists(atPath: "\(state)/familycontrols.db"))
            let purge = try await installScript(root, ["--uninstall", "--purge", "--force"])
            #expect(purge.status == 0, "\(purge.standardError)")
            #expect(try files(under: root) == [])
            #expect(!FileManager.default.fileExists(atPath: state))
        }
    }

    @Test func uninstallRefusesWhileTheGuardLocksAnAppUnlessForced() async throws {
        try await withGuard { guardd in
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
            let root = "\(guardd.directory)/root"
            try await installScript(root).requireSuccess()
            let staged = "\(root)/usr/local/sbin/familycontrolsd"

            // The Guard that locked it answers.
            let asked = try await installScript(root, ["--uninstall"], environment: ["FAMILYCONTROLS_SOCKET": guardd.socket])
            #expect(asked.status == 1)
            #expect(asked.standardError.contains(GuardFixture.appID) && asked.standardError.contains(guardd.child.name),
                    "the locked app is named: \(asked.standardError)")
            #expect(asked.standardError.contains("familyctl revoke --user USER --app APP"), "\(asked.standardError)")
            #expect(asked.standardError.contains("--uninstall --force"), "\(asked.standardError)")
            #expect(FileManager.default.fileExists(atPath: staged), "nothing was removed")

            // No Guard answers: the store alone tells, through a Guard started for the while.
            guardd.stop()
            let state = "\(root)/var/lib/familycontrols"
            try await sh("mkdir -p '\(root)/var/lib' && cp -a '\(guardd.stateDirectory)' '\(state)'").requireSuccess()
            let stored = try await installScript(root, ["--uninstall"])
            #expect(stored.status == 1, "\(stored.standardError)")
            #expect(stored.standardError.contains(GuardFixture.appID), "\(stored.standardError)")
            #expect(FileManager.default.fileExists(atPath: staged), "nothing was removed")
            #expect(try await sh("pgrep -f '^\(staged) '").status == 1, "the Guard started to ask was stopped")

            let forced = try await installScript(root, ["--uninstall", "--force"])
            #expect(forced.status == 0, "\(forced.standardError)")
            #expect(forced.standardError.contains("--force: uninstalling anyway; the locked folders stay as they are"), "\(forced.standardError)")
            #expect(!FileManager.default.fileExists(atPath: staged))
            #expect(FileManager.default.fileExists(atPath: "\(state)/familycontrols.db"), "the store, which records the lock, is kept")
            #expect((inodeFlags(guardd.appDirectory) ?? 0) & 0x10 != 0, "the app stays locked")
        }
    }
}

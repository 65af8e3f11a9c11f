import Foundation
import Testing
import TestSupport

/// Whether an unprivileged user may make a user namespace here (`unshare -U`).
let unprivilegedUserNamespaces: Bool = {
    let limit = (try? String(contentsOfFile: "/proc/sys/user/max_user_namespaces", encoding: .utf8))
        .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    let clone = (try? String(contentsOfFile: "/proc/sys/kernel/unprivileged_userns_clone", encoding: .utf8))
        .map { $0.hasPrefix("1") } ?? true
    return limit > 0 && clone && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
}()

/// Whether a C compiler is here to build the child's preload library.
let canCompileC = FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc")

/// What is approved is the directory the Guard identified, and an approval
/// answers that directory's own program only: the child, as a real
/// unprivileged process, tries to make an approval or a lock land elsewhere.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct BindingAttackTests {
    @Test func aDecoySwappedInWhileTheGuardianIsAskedIsNeverTheOneLocked() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            let real = app + ".real"
            let result = try await guardd.requestApproved {
                // The real app goes away; a decoy of the child's takes its path.
                try await guardd.shell("mv '\(app)' '\(real)' && mkdir '\(app)' && cp '\(real)'/* '\(app)'/").requireSuccess()
            }
            #expect(result.status == 0, "\(result.standardError)")
            #expect(try TreeSnapshot.take(real).unlockedItems().isEmpty, "the directory identified is the one locked")
            #expect(try TreeSnapshot.take(app).items.allSatisfy { !$0.isImmutable }, "the decoy is not locked")
            let row = try #require(try await guardd.authorization())
            #expect(row["lock"]?.stringValue == "locked")
            #expect(row["path"]?.stringValue == real, "status shows where the locked app really is")
            #expect(try await guardd.familyctl(["locks", "verify"]).status == 0)
            #expect(try await guardd.shell("rm -rf '\(real)'").status != 0, "the real app cannot be deleted")

            let (decoyApproved, decoy) = try await guardd.isApproved(executable: app + "/familycontrols-demo")
            #expect(!decoyApproved, "the decoy's program is not the approved app: \(decoy.standardOutput)")
        }
    }

    @Test func anAppPutAtTheApprovedPathAfterRenamingItsParentIsNotApproved() async throws {
        try await withGuard { guardd in
            let app = try guardd.installDemo(for: guardd.child, appID: "org.example.Home", inHome: true)
            try await guardd.requestApproved(executable: app + "/familycontrols-demo").requireSuccess()
            let (approved, _) = try await guardd.isApproved(executable: app + "/familycontrols-demo")
            #expect(approved, "the approved app itself is answered at once")

            let home = "\(guardd.homesRoot)/\(guardd.child.name)"
            try await guardd.shell("""
                set -e
                mv '\(home)/Applications' '\(home)/Moved'
                mkdir -p '\(app)'
                cp '\(home)/Moved/org.example.Home/'* '\(app)/'
                """).requireSuccess()
            let (impostor, result) = try await guardd.isApproved(executable: app + "/familycontrols-demo")
            #expect(!impostor, "another folder at the same path is not the approved app: \(result.standardOutput)")
            #expect(result.standardError.contains("error 4 authorizationConflict"), "\(result.standardError)")
            #expect(result.standardError.contains("already approved for \(guardd.child.name) in another folder"))
            #expect(try await guardd.storedStatus(appID: "org.example.Home") == "approved", "the real approval stands")
        }
    }

    @Test(.enabled(if: unprivilegedUserNamespaces, "unprivileged user namespaces are turned off here"))
    func theChildsOwnCodeMountedOverTheAppInANamespaceOfItsOwnIsRefused() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let fake = "\(guardd.homesRoot)/\(guardd.child.name)/fake"
            try FileManager.default.createDirectory(atPath: fake, withIntermediateDirectories: true)
            try await sh("cp '\(guardd.appDirectory)'/* '\(fake)/' && chown -R \(guardd.child.name) '\(guardd.homesRoot)/\(guardd.child.name)'")
                .requireSuccess()
            let probe = try await guardd.shell("unshare -Urm true")
            try #require(probe.succeeded, "the child cannot make a namespace here: \(probe.standardError)")

            // The demo, with this library, refuses a Guard that does not run as
            // root, and in the child's namespace root is no one it knows.
            let result = try await guardd.shell("""
                unshare -Urm sh -c "mount --bind '\(fake)' '\(guardd.appDirectory)' && \
                exec env -i FAMILYCONTROLS_SOCKET='\(guardd.socket)' '\(guardd.appExecutable)' request --member child --stdin" </dev/null
                """)
            #expect(result.standardOutput != "status: approved\n", "code of the child's was answered as the app")

            // Code of the child's own need not ask: the Guard must refuse it.
            let python = try #require(ScriptedApp.interpreter)
            try await sh("cp '\(python)' '\(fake)/familycontrols-demo' && chown \(guardd.child.name) '\(fake)/familycontrols-demo'")
                .requireSuccess()
            let script = """
                import json, socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                s.sendall(json.dumps({'method': 'org.familycontrols.guard.GetStatus'}).encode() + b'\\0')
                print(s.recv(65536).split(b'\\0')[0].decode())
                """
            try script.write(toFile: "\(fake)/ask.py", atomically: true, encoding: .utf8)
            try await sh("chown \(guardd.child.name) '\(fake)/ask.py'").requireSuccess()
            let raw = try await guardd.shell("""
                unshare -Urm sh -c "mount --bind '\(fake)' '\(guardd.appDirectory)' && \
                exec '\(guardd.appExecutable)' '\(guardd.appDirectory)/ask.py' '\(guardd.socket)'" </dev/null
                """)
            #expect(!raw.standardOutput.contains("approved"), "the Guard answered the child's code as the app: \(raw.standardOutput)")
            #expect(raw.standardOutput.contains("runs in a user namespace of its own"), "\(raw.standardOutput) \(raw.standardError)")
        }
    }

    @Test(.enabled(if: canCompileC, "needs gcc to build the child's library"))
    func aPreloadedLibraryThatHidesItselfFromTheEnvironmentIsStillFound() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let home = "\(guardd.homesRoot)/\(guardd.child.name)"
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            // Rewrites its own LD_PRELOAD= in the environment /proc shows.
            try """
                #include <string.h>
                extern char **environ;
                __attribute__((constructor)) static void hide(void) {
                    for (char **e = environ; *e; e++)
                        if (strncmp(*e, "LD_PRELOAD=", 11) == 0) memset(*e, 'X', 10);
                }
                """.write(toFile: "\(home)/hide.c", atomically: true, encoding: .utf8)
            try await sh("gcc -shared -fPIC -o '\(home)/hide.so' '\(home)/hide.c' && chown -R \(guardd.child.name) '\(home)'")
                .requireSuccess()

            let (approved, result) = try await guardd.isApproved(
                executable: guardd.appExecutable, environment: ["LD_PRELOAD": "\(home)/hide.so"])
            #expect(!approved, "a process running the child's library was answered as the app")
            #expect(result.standardError.contains("runs code from \(home)/hide.so"), "\(result.standardError)")
            let (plain, _) = try await guardd.isApproved(executable: guardd.appExecutable)
            #expect(plain, "the app itself, without it, still is")
        }
    }

    @Test func anAppWhoseFilesOnlyItsChildMayReadStillRunsOnceLocked() async throws {
        try await withGuard { guardd in
            // As installed under umask 077.
            try await sh("chmod -R go-rwx '\(guardd.appDirectory)'").requireSuccess()
            let before = try TreeSnapshot.take(guardd.appDirectory)
            try await guardd.requestApproved().requireSuccess()
            let locked = try TreeSnapshot.take(guardd.appDirectory)
            #expect(locked.unlockedItems().isEmpty)
            #expect(locked.changes(from: before).isEmpty, "owners and modes stay: \(locked.changes(from: before))")
            let (approved, result) = try await guardd.isApproved(executable: guardd.appExecutable)
            #expect(approved, "the child can no longer run the app it was approved: \(result.standardError)")
        }
    }

    @Test func anAppFolderThatIsNotTheChildsOwnIsRefused() async throws {
        try await withGuard { guardd in
            chmod(guardd.appDirectory, 0o777)
            let open = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n")
            #expect(open.status == 1)
            #expect(open.standardError.contains("cannot be an app directory: anyone may write to it"), "\(open.standardError)")
            chmod(guardd.appDirectory, 0o755)
            chown(guardd.appDirectory, 0, 0)
            let roots = try await guardd.app(["request", "--member", "child", "--stdin"], input: "y\n")
            #expect(roots.status == 1)
            #expect(roots.standardError.contains("cannot be an app directory: it belongs to uid 0"), "\(roots.standardError)")
            #expect(!guardd.log.contains("lock: "), "nothing was locked")
        }
    }

    @Test func rootsSharedByEveryUserAreAConfigurationError() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for root in ["/", "/home", "/tmp"] {
            try "[Apps]\nRoots=\(root)\n".write(toFile: "\(directory)/bad.conf", atomically: true, encoding: .utf8)
            // A Guard that accepted it would serve until stopped: at most 10 s.
            let result = try await run("/usr/bin/timeout", ["-s", "KILL", "10", productPath("familycontrolsd"),
                "--config", "\(directory)/bad.conf", "--socket", "\(directory)/s", "--state-dir", "\(directory)/state"])
            #expect(result.status == 3, "Roots=\(root) was accepted")
            #expect(result.standardError.contains("must be a folder of each user's own, with %u (user name) or %h (home)"),
                    "\(result.standardError)")
        }
    }

    @Test func controlCharactersInAnAppsNameAndPathReachNoOneRaw() async throws {
        try await withGuard { guardd in
            let app = guardd.appDirectory
            let hidden = "bin\u{1b}[31m"
            try FileManager.default.createDirectory(atPath: "\(app)/\(hidden)", withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: guardd.appExecutable, toPath: "\(app)/\(hidden)/familycontrols-demo")
            try """
                [Desktop Entry]
                Type=Application
                Name=Demo\u{1b}]0;pwned\u{07}\u{1b}[2J \u{202e}ppa
                Exec=\(hidden)/familycontrols-demo
                X-FamilyControls=true
                """.write(toFile: "\(app)/\(GuardFixture.appID).desktop", atomically: false, encoding: .utf8)
            try await sh("chown -R \(guardd.child.name) '\(app)'").requireSuccess()

            let result = try await guardd.requestApproved(executable: "\(app)/\(hidden)/familycontrols-demo")
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.contains("Allow “Demo\\x1B]0;pwned\\x07\\x1B[2J \\u{202E}ppa”"), "\(result.standardError)")
            let status = try await guardd.familyctl(["status"])
            for (what, text) in [("alert", result.standardError), ("log", guardd.log), ("status", status.standardOutput)] {
                #expect(!text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x202e },
                        "control characters reached the \(what) raw")
            }
        }
    }
}

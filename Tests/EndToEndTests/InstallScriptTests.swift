import Foundation
import Testing
import TestSupport

/// `Config/install.sh` into a staged tree (DESTDIR) and `--uninstall` out of
/// it: nothing left behind, an administrator's edits and the store kept
/// unless `--purge`, and no uninstall while the Guard still locks an app
/// unless `--force`.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct InstallScriptTests {
    /// What install.sh puts under PREFIX=/usr/local and /etc, and the PAM
    /// session module beside pam_unix.so with its pam-auth-update profile.
    static let installed = [
        String((DebianMachine.pamModuleDirectory ?? "/lib/security").dropFirst()) + "/pam_familycontrols.so",
        "usr/share/pam-configs/familycontrols",
        "usr/local/sbin/familycontrolsd", "usr/local/bin/familyctl",
        "usr/local/lib/familycontrols/demo/familycontrols-demo",
        "usr/local/lib/familycontrols/demo/org.familycontrols.Demo.desktop",
        "usr/local/share/familycontrols/org.familycontrols.guard.varlink",
        "usr/local/share/familycontrols/org.familycontrols.inspect.varlink",
        "usr/local/share/familycontrols/org.familycontrols.mover.varlink",
        "usr/local/share/familycontrols/org.familycontrols.conversation.varlink",
        "usr/local/libexec/familycontrols/familycontrols-inspect",
        "usr/local/libexec/familycontrols/familycontrols-agent",
        "usr/local/share/man/man8/familycontrolsd.8", "usr/local/share/man/man8/familyctl.8",
        "usr/local/share/man/man8/familycontrols-inspect.8", "usr/local/share/man/man8/pam_familycontrols.8",
        "usr/local/share/man/man5/familycontrols.conf.5",
        "usr/local/share/bash-completion/completions/familyctl",
        "etc/pam.d/familycontrols-guardian", "etc/pam.d/familycontrols-individual", "etc/pam.d/familycontrols-guardian-code",
        "etc/familycontrols/familycontrols.conf", "etc/flatpak/installations.d/familycontrols.conf",
        "etc/xdg/autostart/familycontrols-agent.desktop",
        "etc/systemd/system/familycontrolsd.service", "etc/systemd/system/familycontrolsd.socket",
        "etc/systemd/system/familycontrols-flatpak@.service", "etc/systemd/system/familycontrols-flatpak.socket",
        "var/lib/familycontrols-flatpak/repo/config",
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

    @Test(.enabled(if: DebianMachine.pamModuleDirectory != nil, "no pam_unix.so: cannot tell where libpam loads modules from"))
    func installingIntoAStagedTreeAndUninstallingLeavesNothingBehind() async throws {
        try await withTemporaryDirectory { directory in
            let root = "\(directory)/root"
            let install = try await installScript(root)
            #expect(install.status == 0, "\(install.standardError)")
            #expect(try files(under: root) == Self.installed.sorted())
            let unit = try String(contentsOfFile: "\(root)/etc/systemd/system/familycontrolsd.service", encoding: .utf8)
            #expect(unit.contains("\nExecStart=/usr/local/sbin/familycontrolsd\n"))
            // The inspector where the Guard in usr/local/sbin looks, as a file it runs: root's, and no one else may write it.
            let inspector = "usr/local/libexec/familycontrols/familycontrols-inspect"
            var status = stat()
            #expect(stat("\(root)/\(inspector)", &status) == 0)
            #expect(status.st_uid == 0 && status.st_mode & 0o7777 == 0o755, "\(status.st_uid) \(String(status.st_mode, radix: 8))")
            #expect(install.standardOutput.contains("==> installed: \(root)/usr/local/sbin/familycontrolsd, \(root)/\(inspector), "),
                    "\(install.standardOutput)")
            // The staged programs run on their own: the runtime is in them.
            let help = try await NoToolchain.sh(#""$1" --help"#, ["\(root)/usr/local/bin/familyctl"])
            #expect(help.status == 0 && help.standardOutput.hasPrefix("usage: familyctl"), "\(help.standardError)")
            // A staged tree's session stack is the target's: pam-auth-update is left to it.
            #expect(install.standardOutput.contains("staged: on the target, run pam-auth-update --package"), "\(install.standardOutput)")

            let uninstall = try await installScript(root, ["--uninstall"])
            #expect(uninstall.status == 0, "\(uninstall.standardError)")
            #expect(try files(under: root) == [])
            for folder in ["usr/local/lib/familycontrols", "usr/local/libexec/familycontrols", "usr/local/share/familycontrols",
                           "usr/local/share/bash-completion", "etc/familycontrols"] {
                #expect(!FileManager.default.fileExists(atPath: "\(root)/\(folder)"), "\(folder) left behind")
            }
        }
    }

    /// Installed on a machine without Flatpak, and Flatpak installed after:
    /// the Guard's installation, named in `installations.d`, already has its
    /// repository, so a real user's `flatpak list` (which opens every
    /// installation) works.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flatpak"), "needs flatpak (Config/install.sh installs it)"))
    func installedBeforeFlatpakTheGuardsInstallationLeavesEveryUsersFlatpakWorking() async throws {
        try await withTemporaryDirectory { directory in
            chmod(directory, 0o755)
            // A PATH with every program of this one but flatpak.
            let path = "\(directory)/path"
            try await sh("""
                mkdir '\(path)'
                for dir in $(echo "$PATH" | tr : ' '); do
                    for program in "$dir"/*; do
                        name=${program##*/}
                        [ "$name" = flatpak ] || [ -e '\(path)'/"$name" ] || ln -s "$program" '\(path)'/"$name"
                    done
                done
                """).requireSuccess()
            let root = "\(directory)/root"
            let install = try await installScript(root, environment: ["PATH": path])
            #expect(install.status == 0, "\(install.standardError)")

            // Flatpak present now; the staged tree's installation as this machine's Flatpak sees it.
            let config = "\(directory)/flatpak"
            try FileManager.default.createDirectory(atPath: "\(config)/installations.d", withIntermediateDirectories: true)
            let named = try String(contentsOfFile: "\(root)/etc/flatpak/installations.d/familycontrols.conf", encoding: .utf8)
            try named.replacingOccurrences(of: "Path=/var/lib/familycontrols-flatpak",
                                           with: "Path=\(root)/var/lib/familycontrols-flatpak")
                .write(toFile: "\(config)/installations.d/familycontrols.conf", atomically: true, encoding: .utf8)
            try await sh("chmod -R a+rX '\(directory)'").requireSuccess()
            let home = "\(directory)/home"
            let user = try makeThrowawayUser(prefix: "k", password: false, home: home)
            defer { removeThrowawayUser(user) }
            try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
            try await sh("chown \(user.name): '\(home)'").requireSuccess()
            for arguments in [["list", "--user"], ["list"], ["--installation=familycontrols", "list"], ["remotes"]] {
                let listed = try await run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                                                                "/usr/bin/env", "-i", "HOME=\(home)", "PATH=/usr/bin:/bin",
                                                                "FLATPAK_CONFIG_DIR=\(config)", "/usr/bin/flatpak"] + arguments)
                #expect(listed.status == 0, "flatpak \(arguments.joined(separator: " ")): \(listed.standardError)")
                #expect(!listed.standardError.contains("While opening repository"))
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

    // MARK: - The PAM session module, on this very machine

    /// What install.sh changes on the machine outside its PREFIX, put back
    /// after the test whatever happens: the /etc files (and their *.dist),
    /// the session stacks, the profile and the module.
    static var machineFiles: [String] {
        DebianMachine.conffiles + DebianMachine.conffiles.map { $0 + ".dist" } + DebianMachine.pamStack
            + [DebianMachine.pamProfile, "\(DebianMachine.pamModuleDirectory ?? "/lib/security")/pam_familycontrols.so"]
    }

    /// install.sh (or --uninstall) on the machine itself: no DESTDIR, the
    /// programs under `prefix`, no Guard asked but the one on `socket`.
    private func installOnMachine(prefix: String, socket: String, _ options: [String] = ["--no-packages", "--no-start"])
        async throws -> ProcessResult {
        _ = try await ReleaseBuild.binDirectory()
        return try await run("\(packageRoot)/Config/install.sh", options,
                             environment: ["DESTDIR": String?.none, "PREFIX": prefix, "FAMILYCONTROLS_SOCKET": socket])
    }

    /// `su - USER -c COMMAND` as root: the machine's own /etc/pam.d/su-l,
    /// which includes common-session (Debian's runuser-l does not), in a mount
    /// namespace of its own where the module's default socket,
    /// /run/familycontrols/guard.socket, leads to `socket`.
    private func login(_ user: ThrowawayUser, _ command: String, socket: String) async throws -> ProcessResult {
        let script = """
            mount -t tmpfs -o size=1m,mode=0755 none /run/familycontrols || exit 90
            ln -s "$1" /run/familycontrols/guard.socket || exit 91
            exec /usr/bin/su - "$2" -s /bin/sh -c "$3"
            """
        return try await run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh",
                                                 socket, user.name, command])
    }

    @Test(.enabled(if: DebianMachine.hasPAMAuthUpdate, "needs pam-auth-update (libpam-runtime) to manage common-session"),
          .enabled(if: DebianMachine.pamModuleDirectory != nil, "no pam_unix.so: cannot tell where libpam loads modules from"),
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/su"), "needs su (util-linux)"),
          .enabled(if: DebianMachine.status() == "not-installed", "familycontrols is installed here: it owns the module"),
          .enabled(if: !FileManager.default.fileExists(atPath: DebianMachine.state),
                   "/var/lib/familycontrols exists: an uninstall here could touch that store"))
    func installingOnTheMachineAddsTheSessionModuleToLoginsWhichNeverWaitForTheGuard() async throws {
        try await withGuard { guardd in
            let prefix = "\(guardd.directory)/prefix"
            let module = "\(DebianMachine.pamModuleDirectory ?? "")/pam_familycontrols.so"
            let before = try MachineFiles.take(Self.machineFiles)
            let stacksBefore = try MachineFiles.take(DebianMachine.pamStack)
            let flatpakInstallation = "/var/lib/familycontrols-flatpak"
            let hadFlatpakInstallation = FileManager.default.fileExists(atPath: flatpakInstallation)
            let hadRuntimeFolder = FileManager.default.fileExists(atPath: "/run/familycontrols")
            try FileManager.default.createDirectory(atPath: "/run/familycontrols", withIntermediateDirectories: true)
            let nobody = "\(guardd.directory)/none.socket"
            func putBack() async throws {
                if FileManager.default.fileExists(atPath: module) || FileManager.default.fileExists(atPath: "\(prefix)/bin/familyctl") {
                    _ = try? await installOnMachine(prefix: prefix, socket: nobody, ["--uninstall", "--force"])
                }
                try before.restore()
                if !hadFlatpakInstallation { try? FileManager.default.removeItem(atPath: flatpakInstallation) }
                if !hadRuntimeFolder { rmdir("/run/familycontrols") }
            }
            do {
                let install = try await installOnMachine(prefix: prefix, socket: nobody)
                #expect(install.status == 0, "\(install.standardError)")
                // Twice is fine: the stack still names the module once.
                let again = try await installOnMachine(prefix: prefix, socket: nobody)
                #expect(again.status == 0, "\(again.standardError)")
                let session = try String(contentsOfFile: "/etc/pam.d/common-session", encoding: .utf8)
                #expect(session.components(separatedBy: "\nsession\toptional\tpam_familycontrols.so").count == 2, "\(session)")
                let account = try String(contentsOfFile: "/etc/pam.d/common-account", encoding: .utf8)
                #expect(account.components(separatedBy: "\tpam_familycontrols.so").count == 2, "\(account)")
                #expect(FileManager.default.fileExists(atPath: module))
                #expect(FileManager.default.fileExists(atPath: DebianMachine.pamProfile))

                // A login through the machine's stack tells the running Guard, opened and closed.
                let told = try await login(guardd.child, "echo in", socket: guardd.socket)
                #expect(told.status == 0, "\(told.standardError)")
                #expect(told.standardOutput == "in\n", "\(told.standardOutput)")
                #expect(guardd.log.contains("session: \(guardd.child.name) opened (service su-l"), "\(guardd.log)")
                #expect(await eventually { guardd.log.contains("session: \(guardd.child.name) closed (service su-l") },
                        "\(guardd.log)")

                // The Guard stopped: the login still succeeds, at once.
                guardd.stop()
                let started = ContinuousClock.now
                let alone = try await login(guardd.child, "echo in", socket: guardd.socket)
                let took = ContinuousClock.now - started
                #expect(alone.status == 0, "\(alone.standardError)")
                #expect(alone.standardOutput == "in\n", "\(alone.standardOutput)")
                #expect(took < .seconds(3), "the login took \(took)")

                // Uninstalled: the stacks are as they were, the profile and the module gone.
                let uninstall = try await installOnMachine(prefix: prefix, socket: nobody, ["--uninstall"])
                #expect(uninstall.status == 0, "\(uninstall.standardError)")
                let after = try String(contentsOfFile: "/etc/pam.d/common-session", encoding: .utf8)
                #expect(!after.contains("pam_familycontrols"), "\(after)")
                #expect(try MachineFiles.take(DebianMachine.pamStack) == stacksBefore, "the account and session stacks are back as they were")
                #expect(!FileManager.default.fileExists(atPath: module), "\(module) is left")
                #expect(!FileManager.default.fileExists(atPath: DebianMachine.pamProfile), "the profile is left")
            } catch {
                try await putBack()
                throw error
            }
            try await putBack()
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

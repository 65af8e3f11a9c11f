import Foundation
import Testing
import TestSupport

extension MachinePackageTests {
    /// The Debian package on this very machine: `dpkg -i`, the installed Guard
    /// serving `familyctl status`, `dpkg --purge`, and the machine as it was,
    /// its own /etc files included. Removal refuses while the Guard locks an app.
    @Suite(.serialized,
           .enabled(if: getuid() == 0, "needs root: it installs and purges a package"),
           .enabled(if: DebianMachine.hasDebianTools, "needs dpkg-deb, dpkg-shlibdeps and dpkg-gencontrol (apt-get install dpkg-dev)"),
           .enabled(if: DebianMachine.status() == "not-installed", "familycontrols is installed here: the test would remove it"),
           .enabled(if: !FileManager.default.fileExists(atPath: DebianMachine.state),
                    "/var/lib/familycontrols exists: purging the package would delete that store"),
           .enabled(if: NoToolchain.available, "needs unshare and a debug build (to run the package's programs without the toolchain)"),
           .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
    struct DebianPackageTests {
        static let state = DebianMachine.state
        static let conffiles = DebianMachine.conffiles
        static func status() -> String { DebianMachine.status() }

        private func dpkg(_ arguments: [String], environment: [String: String?] = [:]) async throws -> ProcessResult {
            var env = environment
            env["DEBIAN_FRONTEND"] = "noninteractive"
            if env["FAMILYCONTROLS_SOCKET"] == nil { env["FAMILYCONTROLS_SOCKET"] = .some(nil) }
            return try await run("/usr/bin/dpkg", arguments, environment: env)
        }

        /// Installs the package, runs `body`, and purges it, whatever happens; the
        /// machine's files at the conffile paths are put back exactly as they were.
        private func withPackageInstalled(_ body: (_ install: ProcessResult) async throws -> Void) async throws {
            try await MachineInstallation.exclusively {
                let deb = try await ReleaseBuild.debianPackage()
                let before = try MachineFiles.take(Self.conffiles + DebianMachine.pamStack)
                do {
                    // An administrator's configuration is there already (install.sh, or by hand).
                    try FileManager.default.createDirectory(atPath: "/etc/familycontrols", withIntermediateDirectories: true)
                    try "# the administrator's own\n[Family]\n".write(toFile: Self.conffiles[0], atomically: false, encoding: .utf8)
                    chmod(Self.conffiles[0], 0o644)
                    let install = try await dpkg(["--force-confdef", "--force-confold", "-i", deb])
                    try await body(install)
                } catch {
                    _ = try? await dpkg(["--purge", "familycontrols"], environment: ["FAMILYCONTROLS_KEEP_LOCKS": "yes"])
                    try before.restore()
                    throw error
                }
                if Self.status() != "not-installed" {
                    _ = try? await dpkg(["--purge", "familycontrols"], environment: ["FAMILYCONTROLS_KEEP_LOCKS": "yes"])
                }
                try before.restore()
                #expect(try MachineFiles.take(Self.conffiles + DebianMachine.pamStack) == before,
                        "the machine's own files are back as they were")
            }
        }

        @Test func installServeAndPurgeLeaveTheMachineAsItWas() async throws {
            let pamStackBefore = try MachineFiles.take(DebianMachine.pamStack)
            let module = "/lib/\(DebianMachine.multiarch)/security/pam_familycontrols.so"
            // A Guard Config/install.sh put in /usr/local before the package came: said, not changed.
            let localCopy = "/usr/local/sbin/familycontrolsd"
            let placed = !FileManager.default.fileExists(atPath: localCopy)
            if placed {
                try FileManager.default.createDirectory(atPath: "/usr/local/sbin", withIntermediateDirectories: true)
                try writeProgram("#!/bin/sh\nexit 0\n", to: localCopy, mode: 0o755)
            }
            defer { if placed { unlink(localCopy) } }
            try await withPackageInstalled { install in
                #expect(install.status == 0, "\(install.standardError)")
                #expect(Self.status() == "installed")
                #expect(install.standardOutput.contains("familycontrols: \(localCopy) is from Config/install.sh, not this package")
                        && install.standardOutput.contains("Config/install.sh --uninstall --force"), "\(install.standardOutput)")
                #expect(FileManager.default.fileExists(atPath: localCopy), "the administrator's copy is left alone")
                // Unattended (no terminal, the administrator's file kept), and
                // without systemd it says what it did not do and how to start the Guard.
                if !FileManager.default.fileExists(atPath: "/run/systemd/system") {
                    #expect(install.standardOutput.contains("systemd is not running here, so no Guard was started")
                            && install.standardOutput.contains("start it as root with: familycontrolsd"), "\(install.standardOutput)")
                }
                let listed = try await run("/usr/bin/dpkg", ["-L", "familycontrols"]).requireSuccess().standardOutput
                let paths = listed.split(separator: "\n").map(String.init).filter { $0 != "/." }
                for path in ["/usr/sbin/familycontrolsd", "/usr/bin/familyctl", "/lib/systemd/system/familycontrolsd.service",
                             "/lib/systemd/system/familycontrolsd.socket", "/lib/systemd/system/familycontrols-flatpak.socket",
                             "/lib/systemd/system/familycontrols-flatpak@.service", "/usr/share/man/man8/familycontrolsd.8.gz",
                             "/usr/share/man/man8/familyctl.8.gz", "/usr/share/man/man5/familycontrols.conf.5.gz",
                             "/usr/share/bash-completion/completions/familyctl", "/usr/share/doc/familycontrols/copyright",
                             "/usr/share/doc/familycontrols/changelog.Debian.gz",
                             "/usr/share/familycontrols/org.familycontrols.guard.varlink",
                             DebianMachine.inspector, "/usr/libexec/familycontrols/familycontrols-agent",
                             "/usr/share/familycontrols/org.familycontrols.inspect.varlink",
                             "/usr/share/familycontrols/org.familycontrols.mover.varlink",
                             "/usr/share/familycontrols/org.familycontrols.conversation.varlink",
                             "/usr/share/man/man8/familycontrols-inspect.8.gz", "/usr/share/man/man8/pam_familycontrols.8.gz",
                             module, DebianMachine.pamProfile] + Self.conffiles {
                    #expect(paths.contains(path), "\(path) is not in the package")
                    #expect(FileManager.default.fileExists(atPath: path), "\(path) is not installed")
                }
                let unit = try String(contentsOfFile: "/lib/systemd/system/familycontrolsd.service", encoding: .utf8)
                #expect(unit.contains("\nExecStart=/usr/sbin/familycontrolsd\n"))
                // The inspector where /usr/sbin/familycontrolsd looks, as a file it runs: root's, and no one else may write it.
                var inspector = stat()
                #expect(stat(DebianMachine.inspector, &inspector) == 0)
                #expect(inspector.st_uid == 0 && inspector.st_mode & 0o7777 == 0o755,
                        "\(inspector.st_uid) \(String(inspector.st_mode, radix: 8))")
                // postinst ran pam-auth-update: the session module is in the
                // interactive session stack (not cron's), and links to libpam and libc alone.
                let session = try String(contentsOfFile: "/etc/pam.d/common-session", encoding: .utf8)
                #expect(session.contains("\nsession\toptional\tpam_familycontrols.so"), "\(session)")
                let noninteractive = try String(contentsOfFile: "/etc/pam.d/common-session-noninteractive", encoding: .utf8)
                #expect(!noninteractive.contains("pam_familycontrols.so"), "\(noninteractive)")
                // And in the account stack, where only its PAM_PERM_DENIED refuses.
                let account = try String(contentsOfFile: "/etc/pam.d/common-account", encoding: .utf8)
                #expect(account.contains("\naccount\t[success=ok ignore=ignore perm_denied=bad default=ignore]\tpam_familycontrols.so"),
                        "\(account)")
                let needed = try await run("/usr/bin/readelf", ["-d", module]).requireSuccess().standardOutput
                    .split(separator: "\n").filter { $0.contains("(NEEDED)") }.map { $0.split(separator: "[").last ?? "" }
                #expect(needed.sorted() == ["libc.so.6]", "libpam.so.0]"], "\(needed)")
                let mover = try String(contentsOfFile: "/lib/systemd/system/familycontrols-flatpak@.service", encoding: .utf8)
                #expect(mover.contains("/usr/sbin/familycontrolsd ") && !mover.contains("/usr/local"), "\(mover)")
                let conffiles = try await run("/usr/bin/dpkg-query", ["-W", "-f=${Conffiles}", "familycontrols"]).standardOutput
                #expect(Self.conffiles.allSatisfy { conffiles.contains(" \($0) ") }, "\(conffiles)")
                // libstdc++ and libgcc are linked in: the package names the source they came from.
                let staticBuiltUsing = try await run("/usr/bin/dpkg-query", ["-W", "-f=${Static-Built-Using}", "familycontrols"])
                    .standardOutput
                #expect(staticBuiltUsing.hasPrefix("gcc-") && staticBuiltUsing.contains(" (= "), "\(staticBuiltUsing)")
                // The administrator's file is kept; the package's is beside it.
                #expect(try String(contentsOfFile: Self.conffiles[0], encoding: .utf8).hasPrefix("# the administrator's own"))
                #expect(FileManager.default.fileExists(atPath: Self.conffiles[0] + ".dpkg-dist"))
                #expect(try FileManager.default.attributesOfItem(atPath: Self.state)[.posixPermissions] as? Int == 0o700)
                // The Guard's Flatpak installation is named in /etc/flatpak: its
                // repository must exist, or every user's Flatpak fails to open it:
                // made by the package itself, so Flatpak installed later works too.
                #expect(FileManager.default.fileExists(atPath: "/var/lib/familycontrols-flatpak/repo/config"))
                if FileManager.default.isExecutableFile(atPath: "/usr/bin/flatpak") {
                    try await withTemporaryDirectory { home in
                        try await withThrowawayUser(home: home) { user in
                            chown(home, user.uid, user.gid)
                            let listed = try await run("/usr/sbin/runuser", ["-u", user.name, "--", "/usr/bin/flatpak", "list"],
                                                       environment: ["HOME": home])
                            #expect(listed.status == 0, "\(listed.standardError)")
                        }
                    }
                }

                // The installed Guard, on a socket and store of its own, from its
                // installed configuration and PAM services; no toolchain in reach.
                try await withTemporaryDirectory { directory in
                    let served = try await NoToolchain.sh(#"""
                        set -e
                        /usr/sbin/familycontrolsd --check-config
                        /usr/sbin/familycontrolsd --socket "$1/guard.socket" --state-dir "$1/state" 2>"$1/guard.log" &
                        guard=$!
                        tries=0
                        until /usr/bin/familyctl --socket "$1/guard.socket" status --json 2>/dev/null; do
                            tries=$((tries + 1))
                            if [ "$tries" -gt 200 ] || ! kill -0 "$guard"; then cat "$1/guard.log" >&2; exit 92; fi
                            sleep 0.05
                        done
                        kill "$guard"
                        wait "$guard"
                        """#, [directory])
                    #expect(served.status == 0, "\(served.standardError)")
                    #expect(served.standardOutput == "familycontrolsd: /etc/familycontrols/familycontrols.conf: OK\n{\"authorizations\":[]}\n",
                            "\(served.standardOutput)")
                }

                let purge = try await dpkg(["--purge", "familycontrols"])
                #expect(purge.status == 0, "\(purge.standardError)")
                #expect(Self.status() == "not-installed")
                // prerm ran pam-auth-update --remove: the stacks are as they were before the package.
                let stackAfterPurge = (try? String(contentsOfFile: "/etc/pam.d/common-session", encoding: .utf8)) ?? ""
                #expect(try MachineFiles.take(DebianMachine.pamStack) == pamStackBefore, "\(stackAfterPurge)")
                for path in paths {
                    var isDirectory: ObjCBool = false
                    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
                    // Folders others share (/usr/bin, /etc/pam.d) stay; nothing of the package does.
                    #expect(isDirectory.boolValue && !path.contains("familycontrols"), "\(path) is left after the purge")
                }
                for path in Self.conffiles {
                    for leftover in [path, path + ".dpkg-dist", path + ".dpkg-old", path + ".dpkg-new"] {
                        #expect(!FileManager.default.fileExists(atPath: leftover), "\(leftover) is left after the purge")
                    }
                }
                #expect(!FileManager.default.fileExists(atPath: Self.state), "the purge removes the store")
                #expect(!FileManager.default.fileExists(atPath: "/var/lib/familycontrols-flatpak"),
                        "the purge removes the Guard's Flatpak installation when it holds no app")
                let units = try await sh("find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled "
                    + "/var/lib/systemd/deb-systemd-helper-masked -name 'familycontrols*' 2>/dev/null")
                #expect(units.standardOutput.isEmpty, "unit links left: \(units.standardOutput)")
            }
        }

        /// Flatpak opens every installation `/etc/flatpak/installations.d` names.
        /// dpkg unpacks that file as `.dpkg-new` and puts it in place when it
        /// configures, before the postinst runs: the Guard's repository is
        /// made by the preinst, so it is there already once dpkg has unpacked,
        /// and no moment of an install makes every user's `flatpak` fail.
        @Test func theGuardsFlatpakRepositoryIsThereBeforeFlatpakIsToldOfIt() async throws {
            try await MachineInstallation.exclusively {
                let deb = try await ReleaseBuild.debianPackage()
                let before = try MachineFiles.take(Self.conffiles + DebianMachine.pamStack)
                let named = "/etc/flatpak/installations.d/familycontrols.conf"
                let unpacked = try await dpkg(["--unpack", deb])
                let unpackedFile = FileManager.default.fileExists(atPath: named) || FileManager.default.fileExists(atPath: named + ".dpkg-new")
                let repository = FileManager.default.fileExists(atPath: "/var/lib/familycontrols-flatpak/repo/config")
                _ = try? await dpkg(["--purge", "familycontrols"])
                try before.restore()
                #expect(unpacked.status == 0, "\(unpacked.standardError)")
                #expect(unpackedFile, "dpkg unpacked \(named)")
                #expect(repository, "the Guard's repository is there before dpkg puts \(named) in place")
                #expect(!FileManager.default.fileExists(atPath: "/var/lib/familycontrols-flatpak"), "the purge removes the repository it made")
                #expect(!FileManager.default.fileExists(atPath: named), "the purge removes \(named)")
            }
        }

        /// `dpkg --purge` while a Guard still serves from the store (one the
        /// administrator started by hand): the store, its approvals and lock
        /// journal stay, and the purge says so.
        @Test func purgeKeepsTheStoreOfAGuardStillServingFromIt() async throws {
            try await withPackageInstalled { install in
                #expect(install.status == 0, "\(install.standardError)")
                try await withTemporaryDirectory { directory in
                    let guardProcess = Process()
                    guardProcess.executableURL = URL(fileURLWithPath: "/usr/sbin/familycontrolsd")
                    guardProcess.arguments = ["--socket", "\(directory)/guard.socket"]
                    guardProcess.standardError = FileHandle.nullDevice
                    try guardProcess.run()
                    defer { if guardProcess.isRunning { guardProcess.terminate(); guardProcess.waitUntilExit() } }
                    var serving = false
                    for _ in 0..<200 where !serving && guardProcess.isRunning {
                        serving = try await run("/usr/bin/familyctl", ["--socket", "\(directory)/guard.socket", "status"]).status == 0
                        if !serving { try await Task.sleep(for: .milliseconds(50)) }
                    }
                    try #require(serving, "the installed Guard did not serve from /var/lib/familycontrols")
                    let purge = try await dpkg(["--purge", "familycontrols"])
                    #expect(purge.status == 0, "\(purge.standardError)")
                    #expect(purge.standardOutput.contains("a running familycontrolsd still uses /var/lib/familycontrols: the store is kept"),
                            "\(purge.standardOutput)")
                    #expect(FileManager.default.fileExists(atPath: Self.state + "/familycontrols.db"), "the running Guard's store is gone")
                    guardProcess.terminate()
                    guardProcess.waitUntilExit()
                }
                // What the test made, and the purge rightly left, goes now.
                try? FileManager.default.removeItem(atPath: Self.state)
            }
        }

        @Test func removalRefusesWhileTheGuardLocksAnAppUnlessTheLocksAreKept() async throws {
            try await withGuard { guardd in
                try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
                #expect(try await guardd.authorization()?["lock"]?.stringValue == "locked")
                try await withPackageInstalled { install in
                    #expect(install.status == 0, "\(install.standardError)")
                    let refused = try await dpkg(["--remove", "familycontrols"], environment: ["FAMILYCONTROLS_SOCKET": guardd.socket])
                    #expect(refused.status != 0)
                    #expect(refused.standardError.contains(GuardFixture.appID), "the locked app is named: \(refused.standardError)")
                    #expect(refused.standardError.contains("familyctl revoke --user USER --app APP"), "\(refused.standardError)")
                    #expect(refused.standardError.contains("FAMILYCONTROLS_KEEP_LOCKS=yes"), "\(refused.standardError)")
                    #expect(Self.status() == "installed", "the package stays")
                    #expect(FileManager.default.isExecutableFile(atPath: "/usr/sbin/familycontrolsd"))

                    let kept = try await dpkg(["--purge", "familycontrols"], environment: [
                        "FAMILYCONTROLS_SOCKET": guardd.socket, "FAMILYCONTROLS_KEEP_LOCKS": "yes",
                    ])
                    #expect(kept.status == 0, "\(kept.standardError)")
                    #expect(Self.status() == "not-installed")
                    #expect((inodeFlags(guardd.appDirectory) ?? 0) & 0x10 != 0, "the app stays locked")
                }
            }
        }
    }
}

/// This machine as dpkg sees it.
enum DebianMachine {
    static let state = "/var/lib/familycontrols"
    /// Where the package puts the inspector: `../libexec/familycontrols` from the Guard's `/usr/sbin`.
    static let inspector = "/usr/libexec/familycontrols/familycontrols-inspect"
    /// The machine's own files at the package's conffile paths (install.sh puts them there too).
    static let conffiles = ["/etc/familycontrols/familycontrols.conf", "/etc/pam.d/familycontrols-guardian",
                            "/etc/pam.d/familycontrols-individual", "/etc/pam.d/familycontrols-guardian-code",
                            "/etc/flatpak/installations.d/familycontrols.conf",
                            "/etc/xdg/autostart/familycontrols-agent.desktop"]

    /// What pam-auth-update writes: the account and session stacks, and its
    /// record of the profiles it has seen and the lines it enabled.
    static let pamStack = ["/etc/pam.d/common-account", "/etc/pam.d/common-session", "/etc/pam.d/common-session-noninteractive",
                           "/var/lib/pam/seen", "/var/lib/pam/account", "/var/lib/pam/session",
                           "/var/lib/pam/session-noninteractive"]
    static let pamProfile = "/usr/share/pam-configs/familycontrols"

    static var hasPAMAuthUpdate: Bool { FileManager.default.isExecutableFile(atPath: "/usr/sbin/pam-auth-update") }

    /// The Debian multiarch triplet (x86_64-linux-gnu), or "" where there is none.
    static let multiarch: String = {
        let result = try? TestSupport.run("/bin/sh", ["-c", "dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch"])
        return result?.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }()

    /// Where libpam loads modules from, found as install.sh finds it: the folder holding pam_unix.so.
    static let pamModuleDirectory: String? = {
        let multiarchFolders = multiarch.isEmpty ? [] : ["/usr/lib/\(multiarch)/security", "/lib/\(multiarch)/security"]
        return (multiarchFolders + ["/usr/lib64/security", "/lib64/security", "/usr/lib/security", "/lib/security"])
            .first { FileManager.default.fileExists(atPath: "\($0)/pam_unix.so") }
    }()

    static var hasDebianTools: Bool {
        ["dpkg", "dpkg-deb", "dpkg-shlibdeps", "dpkg-gencontrol", "dpkg-parsechangelog"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: "/usr/bin/\($0)") }
    }

    /// dpkg's state for familycontrols: installed, config-files, not-installed, …
    static func status() -> String {
        let result = try? TestSupport.run("/usr/bin/dpkg-query", ["-W", "-f=${db:Status-Status}", "familycontrols"])
        guard let result, result.succeeded, !result.standardOutput.isEmpty else { return "not-installed" }
        return result.standardOutput
    }
}

/// Files at fixed paths, as they are: contents, mode and owner, or absent.
struct MachineFiles: Equatable {
    struct File: Equatable {
        var contents: Data
        var mode: mode_t
        var uid: uid_t
        var gid: gid_t
    }

    var files: [String: File?]

    static func take(_ paths: [String]) throws -> MachineFiles {
        var files: [String: File?] = [:]
        for path in paths {
            var status = stat()
            guard lstat(path, &status) == 0 else {
                files[path] = .some(nil)
                continue
            }
            let contents = try Data(contentsOf: URL(fileURLWithPath: path))
            files[path] = File(contents: contents, mode: status.st_mode & 0o7777, uid: status.st_uid, gid: status.st_gid)
        }
        return MachineFiles(files: files)
    }

    /// Puts every file back as it was; removes those that were not there, and
    /// their folder when it is left empty.
    func restore() throws {
        for (path, file) in files {
            guard let file else {
                unlink(path)
                rmdir((path as NSString).deletingLastPathComponent)
                continue
            }
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            unlink(path)
            try file.contents.write(to: URL(fileURLWithPath: path))
            chmod(path, file.mode)
            chown(path, file.uid, file.gid)
        }
    }
}

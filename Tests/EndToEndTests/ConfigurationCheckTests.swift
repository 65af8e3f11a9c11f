import Foundation
import Testing
import TestSupport

/// `familycontrolsd --check-config`, and the same check at start and on
/// reload: unsafe configurations are refused, doubtful ones warned about.
/// Real files and modes, real users through NSS, the real daemon.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct ConfigurationCheckTests {
    private let daemon = productPath("familycontrolsd")

    /// A folder with the shipped pam.d services and `text` as the configuration.
    private func withConfiguration<R>(_ text: String, _ body: (_ directory: String, _ config: String) async throws -> R) async throws -> R {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: "\(directory)/pam.d", withIntermediateDirectories: true)
            for service in ["familycontrols-guardian", "familycontrols-individual"] {
                try FileManager.default.copyItem(atPath: "\(packageRoot)/pam.d/\(service)", toPath: "\(directory)/pam.d/\(service)")
            }
            let config = "\(directory)/familycontrols.conf"
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            chmod(config, 0o644)
            return try await body(directory, config)
        }
    }

    /// The check, with a store folder that does not exist: the machine's own
    /// store (a Guard installed beside the tests) is not this configuration's.
    private func check(_ config: String, pamDir: String) async throws -> ProcessResult {
        try await run(daemon, ["--check-config", "--config", config, "--pam-dir", pamDir, "--state-dir", "\(pamDir)/no-store"])
    }

    @Test func aSoundConfigurationIsOK() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withConfiguration("[Family]\nGuardians=\(guardian.name)\nChildren=\(child.name)\n") { directory, config in
                    let result = try await check(config, pamDir: "\(directory)/pam.d")
                    #expect(result.status == 0, "\(result.standardError)")
                    #expect(result.standardOutput == "familycontrolsd: \(config): OK\n")
                    #expect(result.standardError.isEmpty)
                }
            }
        }
    }

    @Test func theFlatpakKeysAreKnownAndAnExtraInstallationThatIsNotRootsIsWarnedAbout() async throws {
        try await withThrowawayUser(prefix: "c") { child in
            let theirs = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: theirs) }
            chown(theirs, child.uid, child.gid)
            let missing = "\(theirs)/none"
            let text = "[Flatpak]\nUserInstallations=no\nSystemInstallation=yes\nInstallations=\(theirs) \(missing)\n"
            try await withConfiguration(text) { directory, config in
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 0, "\(result.standardError)")
                #expect(result.standardError.contains("\(config):4: warning: Installations=\(theirs): belongs to uid \(child.uid)"),
                        "\(result.standardError)")
                #expect(result.standardError.contains("\(config):4: warning: Installations=\(missing): no such folder"),
                        "\(result.standardError)")
            }
            let move = "[Flatpak]\nMoveService=\(missing)/move.socket\nGuardInstallation=\(theirs)\n"
            try await withConfiguration(move) { directory, config in
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 0, "\(result.standardError)")
                #expect(result.standardError.contains("\(config):2: warning: MoveService=\(missing)/move.socket: no socket there"),
                        "\(result.standardError)")
                #expect(result.standardError.contains("\(config):3: warning: GuardInstallation=\(theirs): not a folder of root's"),
                        "\(result.standardError)")
            }
            try await withConfiguration("[Flatpak]\nUserInstallation=no\n") { directory, config in
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status != 0)
                #expect(result.standardError.contains("unknown key \"UserInstallation\" in [Flatpak]"), "\(result.standardError)")
            }
        }
    }

    @Test(arguments: [0o666, 0o664])
    func aConfigurationOthersMayWriteIsRefusedAndTheGuardWillNotStart(mode: Int) async throws {
        try await withConfiguration("[Family]\n") { directory, config in
            chmod(config, mode_t(mode))
            // Group-writable matters only for a group other than root's.
            chown(config, 0, 100)
            let result = try await check(config, pamDir: "\(directory)/pam.d")
            #expect(result.status == 3)
            let who = mode == 0o666 ? "can be written by every user" : "can be written by group 100"
            #expect(result.standardError.contains("\(config): refused: the file \(who)"), "\(result.standardError)")
            let started = try await run(daemon, ["--config", config, "--pam-dir", "\(directory)/pam.d",
                                                 "--socket", "\(directory)/s", "--state-dir", "\(directory)/state"])
            #expect(started.status == 3)
            #expect(started.standardError.contains("unsafe configuration refused"), "\(started.standardError)")
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/s"), "the Guard served anyway")
        }
    }

    @Test func aConfigurationInAFolderAUserOwnsIsRefusedEvenThroughALink() async throws {
        try await withThrowawayUser { user in
            try await withConfiguration("[Family]\n") { directory, config in
                let theirs = "\(directory)/theirs"
                try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
                chown(theirs, user.uid, user.gid)
                try FileManager.default.moveItem(atPath: config, toPath: "\(theirs)/familycontrols.conf")
                try FileManager.default.createSymbolicLink(atPath: config, withDestinationPath: "\(theirs)/familycontrols.conf")
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 3)
                #expect(result.standardError.contains("refused: the folder \(theirs) belongs to uid \(user.uid), not root"),
                        "\(result.standardError)")
            }
        }
    }

    @Test(arguments: ["[Family]\nChildren=root\n", "[Family]\nChildren=@root\n", "[Family]\nChildren=x\n[Child root]\nGuardians=x\n"])
    func rootAsAChildIsRefused(text: String) async throws {
        try await withConfiguration(text) { directory, config in
            let result = try await check(config, pamDir: "\(directory)/pam.d")
            #expect(result.status == 3, "\(result.standardError)")
            #expect(result.standardError.contains("root is a child here") || result.standardError.contains("makes root a child"),
                    "\(result.standardError)")
        }
    }

    @Test func aChildGroupMemberWithRootsUIDIsRefused() async throws {
        try await withThrowawayUser(prefix: "r", sharing: 0) { alias in
            try await withThrowawayGroup(members: [alias.name]) { group in
                try await withConfiguration("[Family]\nChildren=@\(group)\n") { directory, config in
                    let result = try await check(config, pamDir: "\(directory)/pam.d")
                    #expect(result.status == 3, "\(result.standardError)")
                    #expect(result.standardError.contains("\(config):2: refused: root is a child here (Children=)"),
                            "\(result.standardError)")
                }
            }
        }
    }

    @Test func theSameUserAsChildAndGuardianIsRefused() async throws {
        try await withThrowawayUser(prefix: "b") { both in
            try await withThrowawayUser(prefix: "c") { child in
                try await withConfiguration("[Family]\nGuardians=\(both.name)\nChildren=\(both.name) \(child.name)\n") { directory, config in
                    let result = try await check(config, pamDir: "\(directory)/pam.d")
                    #expect(result.status == 3)
                    #expect(result.standardError.contains("\(config):2: refused: \(both.name) is both a child and a guardian"),
                            "\(result.standardError)")
                }
            }
        }
    }

    @Test func aServiceThatDoesNotExistIsRefusedAndAuthenticateNoLongerPasses() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            let text = "[Family]\nGuardians=\(guardian.name)\n[Authentication]\nGuardianService=familycontrols-guardain\n"
            try await withConfiguration(text) { directory, config in
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 3)
                #expect(result.standardError.contains(
                    "\(config):4: refused: GuardianService=familycontrols-guardain: \(directory)/pam.d/familycontrols-guardain does not exist"),
                    "\(result.standardError)")
                // The site's `other` would let the right password through; the service is refused instead.
                try "auth required pam_permit.so\naccount required pam_permit.so\n"
                    .write(toFile: "\(directory)/pam.d/other", atomically: true, encoding: .utf8)
                let authenticated = try await run(productPath("familyctl"), [
                    "authenticate", guardian.name, "--member", "child", "--stdin",
                    "--config", config, "--pam-dir", "\(directory)/pam.d"], input: (guardian.password ?? "") + "\n")
                #expect(authenticated.status == 1, "\(authenticated.standardOutput)")
                #expect(authenticated.standardError.contains("PAM service familycontrols-guardain cannot be used"),
                        "\(authenticated.standardError)")
            }
        }
    }

    @Test func unknownNamesAreWarningsAndTheGuardStartsAndSaysSo() async throws {
        try await withThrowawayUser(prefix: "c") { child in
            let text = "[Family]\nGuardians=nosuchguardian1 @nosuchgroup1\nChildren=\(child.name)\n[Child nosuchchild1]\nGuardians=x\n"
            try await withConfiguration(text) { directory, config in
                let result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 0, "\(result.standardError)")
                #expect(result.standardOutput == "familycontrolsd: \(config): OK (4 warnings)\n")
                #expect(result.standardError.contains("\(config):2: warning: Guardians= names nosuchguardian1, but no such user is known"))
                #expect(result.standardError.contains("\(config):2: warning: Guardians= names @nosuchgroup1, but no such group is known"))
                #expect(result.standardError.contains("\(config):4: warning: [Child nosuchchild1]: no user nosuchchild1 is known"))
                #expect(result.standardError.contains("\(config):5: warning: Guardians= names x, but no such user is known"))

                // The Guard starts with it, and its log says the same.
                let guardd = Process()
                guardd.executableURL = URL(fileURLWithPath: daemon)
                guardd.arguments = ["--config", config, "--pam-dir", "\(directory)/pam.d",
                                    "--socket", "\(directory)/s", "--state-dir", "\(directory)/state"]
                let log = Pipe()
                guardd.standardError = log
                guardd.standardOutput = FileHandle.nullDevice
                try guardd.run()
                defer { kill(guardd) }
                #expect(await eventually { FileManager.default.fileExists(atPath: "\(directory)/s") }, "the Guard did not start")
                kill(guardd)
                let said = String(decoding: log.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                #expect(said.contains("warning familycontrolsd: \(config):2: warning: Guardians= names nosuchguardian1"), "\(said)")
            }
        }
    }

    @Test func anUnsafeReloadIsRefusedAndThePreviousConfigurationStays() async throws {
        try await withGuard { guardd in
            let before = try String(contentsOfFile: guardd.configPath, encoding: .utf8)
            try (before + "\n[Child root]\nGuardians=\(guardd.guardian.name)\n")
                .write(toFile: guardd.configPath, atomically: true, encoding: .utf8)
            let pid = try #require(guardd.process?.processIdentifier)
            kill(pid, SIGHUP)
            #expect(await eventually { guardd.log.contains("reload refused, keeping the previous configuration: the new one is unsafe") },
                    "\(guardd.log)")
            #expect(guardd.log.contains("makes root a child"))
            #expect(guardd.process?.isRunning == true)
            // The Guard still answers, on the family it had.
            let status = try await guardd.familyctl(["status", "--user", guardd.child.name])
            #expect(status.status == 0, "\(status.standardError)")
        }
    }

    @Test func dropInsAreCheckedFileByFileAndEachFindingNamesItsFileAndLine() async throws {
        try await withThrowawayUser(prefix: "c") { child in
            try await withConfiguration("[Family]\nGuardians=root\nChildren=\(child.name)\n") { directory, config in
                let folder = "\(config).d"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
                try "# class 5B\n[Family 5B]\nGuardians=nosuchteacher5b\nChildren=\(child.name)\n"
                    .write(toFile: "\(folder)/50-5b.conf", atomically: true, encoding: .utf8)
                chmod("\(folder)/50-5b.conf", 0o644)
                var result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 0, "\(result.standardError)")
                #expect(result.standardError.contains("\(folder)/50-5b.conf:3: warning: Guardians= names nosuchteacher5b"),
                        "\(result.standardError)")
                #expect(result.standardOutput == "familycontrolsd: \(config) with 1 drop-in in \(folder): OK (1 warning)\n",
                        "\(result.standardOutput)")

                // A drop-in the child may write would let the child choose guardians: refused.
                chown("\(folder)/50-5b.conf", child.uid, child.gid)
                result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 3, "\(result.standardError)")
                #expect(result.standardError.contains("\(folder)/50-5b.conf: refused: the file belongs to uid \(child.uid)"),
                        "\(result.standardError)")
                chown("\(folder)/50-5b.conf", 0, 0)
                chmod(folder, 0o777)
                result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 3, "\(result.standardError)")
                #expect(result.standardError.contains("\(folder): refused: the drop-in folder can be written by every user"),
                        "\(result.standardError)")
                chmod(folder, 0o755)

                // A mistake in a drop-in is named in the drop-in, line and all.
                try "[Family 5B]\nTeachers=@staff\n".write(toFile: "\(folder)/60-typo.conf", atomically: true, encoding: .utf8)
                result = try await check(config, pamDir: "\(directory)/pam.d")
                #expect(result.status == 3)
                #expect(result.standardError.hasPrefix("\(folder)/60-typo.conf:2: refused: unknown key \"Teachers\" in [Family 5B]"),
                        "\(result.standardError)")
            }
        }
    }
}

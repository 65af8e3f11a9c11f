import Foundation
import SystemKit
import Testing
import TestSupport

/// A child who can become root or a guardian, or change the Guard, defeats
/// every lock: `familycontrolsd --check-config` refuses it, naming the child
/// and the way; the Guard logs it and root's `familyctl status` warns. Real
/// throwaway users in the machine's real groups (and sharing a uid), real
/// files in /etc/sudoers.d and /etc/doas.conf, real setuid and capability
/// programs in /usr/local/bin, the real sudo and the real daemon.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct ChildPrivilegeTests {
    private let daemon = productPath("familycontrolsd")

    /// A root-owned folder with the shipped pam.d services and a family of `guardian` and `child`.
    private func withFamily<R>(guardian: ThrowawayUser, child: ThrowawayUser,
                               _ body: (_ directory: String, _ config: String) async throws -> R) async throws -> R {
        try await withTemporaryDirectory { directory in
            chmod(directory, 0o755)
            try FileManager.default.createDirectory(atPath: "\(directory)/pam.d", withIntermediateDirectories: true)
            for service in ["familycontrols-guardian", "familycontrols-individual"] {
                try FileManager.default.copyItem(atPath: "\(packageRoot)/pam.d/\(service)", toPath: "\(directory)/pam.d/\(service)")
            }
            let config = "\(directory)/familycontrols.conf"
            try "[Family]\nGuardians=\(guardian.name)\nChildren=\(child.name)\n".write(toFile: config, atomically: true, encoding: .utf8)
            chmod(config, 0o644)
            return try await body(directory, config)
        }
    }

    /// The check, with a store folder that does not exist: the machine's own
    /// store (a Guard installed beside the tests, with its children's time
    /// limits) is not this family's.
    private func check(_ config: String, _ directory: String) async throws -> ProcessResult {
        try await run(daemon, ["--check-config", "--config", config, "--pam-dir", "\(directory)/pam.d",
                               "--state-dir", "\(directory)/no-store"])
    }

    /// `sudo` as the child, through a real login-like switch (its groups initialised), password on standard input.
    private func sudoAsChild(_ child: ThrowawayUser, _ arguments: [String]) async throws -> ProcessResult {
        try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/usr/bin/sudo", "-S", "-k", "-p", ""] + arguments,
                      input: (child.password ?? "") + "\n")
    }

    @Test(arguments: ["sudo", "wheel", "disk", "docker"])
    func aChildInARootEquivalentGroupIsRefusedNamingTheChildAndTheGroup(group: String) async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    let before = try await check(config, directory)
                    #expect(before.status == 0, "a child in no such group passes: \(before.standardError)")
                    #expect(before.standardOutput == "familycontrolsd: \(config): OK\n", "\(before.standardError)")
                    try await withMembership(of: child.name, in: group) {
                        if group == "sudo", FileManager.default.fileExists(atPath: "/usr/bin/sudo") {
                            // The way is real: the child's own password makes it root.
                            let root = try await sudoAsChild(child, ["/usr/bin/id", "-u"])
                            #expect(root.standardOutput == "0\n", "\(root.standardError)")
                        }
                        let result = try await check(config, directory)
                        #expect(result.status == 3, "\(result.standardError)")
                        #expect(result.standardError.contains(
                            "\(config):3: refused: child \(child.name) can become root (member of group \(group))"),
                            "\(result.standardError)")
                        #expect(result.standardError.contains("familycontrolsd: \(config): refused ("))
                    }
                }
            }
        }
    }

    @Test func theUnitsConfigurationOnlyCheckLeavesTheChildrenToTheGuardsLog() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withMembership(of: child.name, in: "sudo") {
                        let result = try await run(daemon, ["--check-config", "--configuration-only", "--config", config,
                                                            "--pam-dir", "\(directory)/pam.d"])
                        #expect(result.status == 0, "\(result.standardError)")
                        #expect(result.standardOutput == "familycontrolsd: \(config): OK\n")
                        let alone = try await run(daemon, ["--configuration-only", "--config", config])
                        #expect(alone.status == 2)
                        #expect(alone.standardError == "familycontrolsd: --configuration-only goes with --check-config\n"
                            + "Try 'familycontrolsd --help'.\n")
                    }
                }
            }
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/sudoers"), "needs sudo (its /etc/sudoers includes /etc/sudoers.d)"),
          arguments: [("ALL=(ALL) NOPASSWD: ALL", "can become root"), ("ALL = (root) ALL", "can become root"),
                      ("ALL=(GUARDIAN) NOPASSWD: ALL", "can log in as guardian GUARDIAN")])
    func aSudoersRuleGivingTheChildEveryCommandIsRefused(rule: String, outcome: String) async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withSudoersRule("\(child.name) \(rule.replacing("GUARDIAN", with: guardian.name))") { file in
                        if rule.contains("NOPASSWD") {
                            // The real sudo agrees: the child runs a command as root, or as the guardian.
                            let target = rule.contains("GUARDIAN") ? guardian : nil
                            let switched = try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/usr/bin/sudo", "-n"]
                                                         + (target.map { ["-u", $0.name] } ?? []) + ["/usr/bin/id", "-u"])
                            #expect(switched.standardOutput == "\(target?.uid ?? 0)\n", "\(switched.standardError)")
                        }
                        let result = try await check(config, directory)
                        #expect(result.status == 3, "\(result.standardError)")
                        let said = "\(file):1: refused: child \(child.name) \(outcome.replacing("GUARDIAN", with: guardian.name)) (sudoers: "
                        #expect(result.standardError.contains(said), "\(result.standardError)")
                    }
                }
            }
        }
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/sudoers"), "needs sudo (its /etc/sudoers includes /etc/sudoers.d)"))
    func aSudoersRuleForSomeCommandsOnlyIsAWarning() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withSudoersRule("\(child.name) ALL=(root) NOPASSWD: /usr/bin/true") { file in
                        let result = try await check(config, directory)
                        #expect(result.status == 0, "\(result.standardError)")
                        #expect(result.standardError.contains(
                            "\(file):1: warning: child \(child.name) can run commands as root (sudoers: \(child.name) ALL=(root) NOPASSWD: /usr/bin/true)"),
                            "\(result.standardError)")
                        #expect(result.standardOutput == "familycontrolsd: \(config): OK (1 warning)\n")
                    }
                }
            }
        }
    }

    enum WritableFile: String, CaseIterable { case ownedPAMService, everyoneWritablePAMService, groupWritableConfiguration, ownedConfigurationFolder }

    @Test(arguments: WritableFile.allCases)
    func aFileOfTheGuardsTheChildMayWriteIsRefused(kind: WritableFile) async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withThrowawayGroup(members: [child.name]) { group in
                    try await withFamily(guardian: guardian, child: child) { directory, config in
                        let guardianService = "\(directory)/pam.d/familycontrols-guardian"
                        let target: String
                        let way: String
                        switch kind {
                        case .ownedPAMService:
                            chown(guardianService, child.uid, 0)
                            target = guardianService
                            way = "can change how guardians authenticate (owns \(guardianService))"
                        case .everyoneWritablePAMService:
                            chmod(guardianService, 0o666)
                            target = guardianService
                            way = "can change how guardians authenticate (every user may write \(guardianService) (mode 666))"
                        case .groupWritableConfiguration:
                            let gid = try #require(try UserDatabase.group(named: group)).gid
                            chown(config, 0, gid)
                            chmod(config, 0o664)
                            target = config
                            way = "can change the family configuration (member of group \(group), which may write \(config) (mode 664))"
                        case .ownedConfigurationFolder:
                            chown(directory, child.uid, child.gid)
                            target = config
                            way = "can change the family configuration (owns \(directory))"
                        }
                        // The way is real: the child, as an ordinary process, changes the file.
                        let path = kind == .ownedConfigurationFolder ? "\(directory)/replaced" : target
                        let wrote = try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/bin/sh", "-c", "echo '# child' >> \"$1\"", "sh", path])
                        #expect(wrote.status == 0, "the child could not write \(path): \(wrote.standardError)")
                        let result = try await check(config, directory)
                        #expect(result.status == 3, "\(result.standardError)")
                        #expect(result.standardError.contains("\(target): refused: child \(child.name) \(way)"), "\(result.standardError)")
                    }
                }
            }
        }
    }

    @Test func theGuardLogsAChildWhoCanBecomeRootAndRootsStatusWarnsUntilReload() async throws {
        let fixture = try await offload { try GuardFixture() }
        defer { fixture.tearDown() }
        try await withMembership(of: fixture.child.name, in: "sudo") {
            try await fixture.start()
            let said = "refused: child \(fixture.child.name) can become root (member of group sudo)"
            #expect(await eventually { fixture.log.contains(said) }, "\(fixture.log)")
            #expect(fixture.log.contains("error familycontrolsd: \(fixture.configPath):3: \(said)"), "\(fixture.log)")

            let status = try await fixture.familyctl(["status"])
            #expect(status.status == 0, "\(status.standardError)")
            #expect(status.standardError.hasPrefix(
                "warning: child \(fixture.child.name) can become root (member of group sudo)"), "\(status.standardError)")
            #expect(status.standardError.hasSuffix("; see familycontrolsd --check-config\n"), "\(status.standardError)")
            #expect(status.standardError.split(separator: "\n").count == 1, "one line: \(status.standardError)")
            let json = try await fixture.familyctl(["status", "--json"])
            #expect(json.standardOutput.hasPrefix("{\"authorizations\""), "--json stays clean: \(json.standardOutput)")

            // A guardian's status carries no warnings: they are for root.
            let guardianCommand = fixture.commandLine(as: fixture.guardian, executable: productPath("familyctl"), ["status"])
            let guardianStatus = try await run(guardianCommand[0], Array(guardianCommand.dropFirst()))
            #expect(!guardianStatus.standardError.contains("warning:"), "\(guardianStatus.standardError)")

            // The child leaves the group; a reload clears the warning.
            try await offload { _ = try run("/usr/bin/gpasswd", ["-d", fixture.child.name, "sudo"]) as ProcessResult }
            let reloads = fixture.log.components(separatedBy: "reloaded ").count
            kill(try #require(fixture.process?.processIdentifier), SIGHUP)
            #expect(await eventually { fixture.log.components(separatedBy: "reloaded ").count > reloads }, "\(fixture.log)")
            let after = try await fixture.familyctl(["status"])
            #expect(after.status == 0 && after.standardError.isEmpty, "\(after.standardError)")

            // Back in the group: the next reload logs it again and root is warned again.
            try await withMembership(of: fixture.child.name, in: "sudo") {
                let logged = fixture.log.components(separatedBy: said).count
                kill(try #require(fixture.process?.processIdentifier), SIGHUP)
                #expect(await eventually { fixture.log.components(separatedBy: said).count > logged }, "\(fixture.log)")
                let again = try await fixture.familyctl(["status"])
                #expect(again.standardError.hasPrefix("warning: child \(fixture.child.name) can become root"), "\(again.standardError)")
            }
        }
    }

    @Test(arguments: [("permit nopass CHILD as root", "refused", "can become root"),
                      ("permit persist CHILD", "refused", "can become root"),
                      ("permit nopass CHILD as GUARDIAN", "refused", "can log in as guardian GUARDIAN"),
                      ("permit nopass CHILD as root cmd /usr/bin/true", "warning", "can run commands as root")])
    func doasPermitAsRootIsRefused(rule: String, severity: String, outcome: String) async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    let written = rule.replacing("CHILD", with: child.name).replacing("GUARDIAN", with: guardian.name)
                    try await withDoasConfiguration("# written by a test\n\(written)\n") { file in
                        let result = try await check(config, directory)
                        #expect(result.status == (severity == "refused" ? 3 : 0), "\(result.standardError)")
                        let said = "\(file):2: \(severity): child \(child.name) "
                            + "\(outcome.replacing("GUARDIAN", with: guardian.name)) (doas: \(written)): "
                        #expect(result.standardError.contains(said), "\(result.standardError)")
                    }
                    // The same family passes once the rule is gone.
                    let after = try await check(config, directory)
                    #expect(after.status == 0 && after.standardError.isEmpty, "\(after.standardError)")
                }
            }
        }
    }

    @Test func doasDenyAfterAPermitPassesSinceTheLastRuleDecides() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withDoasConfiguration("permit nopass \(child.name) as root\ndeny \(child.name)\n") { _ in
                        let result = try await check(config, directory)
                        #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
                    }
                }
            }
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/setcap"), "needs setcap (libcap2-bin)"))
    func fileCapabilityProgramIsRefused() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withProgramCopy(of: "/usr/bin/chattr", runnableBy: child) { program in
                        try await run("/usr/sbin/setcap", ["cap_linux_immutable+ep", program]).requireSuccess()
                        // The attack is real: a folder of the child's, locked as the Guard locks it, is unlocked with the copy.
                        let app = "\(directory)/app"
                        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: false)
                        chown(app, child.uid, child.gid)
                        try await run("/usr/bin/chattr", ["+i", app]).requireSuccess()
                        defer { _ = try? run("/usr/bin/chattr", ["-i", app]) as ProcessResult }
                        let plain = try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/usr/bin/chattr", "-i", app])
                        #expect(plain.status != 0, "the child's own chattr cannot clear the lock")
                        let cleared = try await run("/usr/sbin/runuser", ["-u", child.name, "--", program, "-i", app])
                        #expect(cleared.status == 0, "\(cleared.standardError)")
                        let flags = try await run("/usr/bin/lsattr", ["-d", app])
                        #expect(flags.standardOutput.hasPrefix("-") && !flags.standardOutput.split(separator: " ")[0].contains("i"),
                                "\(flags.standardOutput)")

                        let result = try await check(config, directory)
                        #expect(result.status == 3, "\(result.standardError)")
                        #expect(result.standardError.contains("\(program): refused: child \(child.name) can clear the locks "
                            + "(\(program) has capabilities cap_linux_immutable=ep, which no package ships): "
                            + "cap_linux_immutable clears the immutable attribute the locks are made of"), "\(result.standardError)")
                    }
                }
            }
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/sbin/setcap"), "needs setcap (libcap2-bin)"))
    func theGuardLogsACapabilityProgramAndRootsStatusWarns() async throws {
        let fixture = try await offload { try GuardFixture() }
        defer { fixture.tearDown() }
        try await withProgramCopy(of: "/usr/bin/chattr", runnableBy: fixture.child) { program in
            try await run("/usr/sbin/setcap", ["cap_linux_immutable+ep", program]).requireSuccess()
            try await fixture.start()
            let said = "child \(fixture.child.name) can clear the locks (\(program) has capabilities cap_linux_immutable=ep, "
                + "which no package ships)"
            #expect(await eventually { fixture.log.contains("error familycontrolsd: \(program): refused: \(said)") }, "\(fixture.log)")
            let status = try await fixture.familyctl(["status"])
            #expect(status.status == 0, "\(status.standardError)")
            #expect(status.standardError.hasPrefix("warning: \(said)"), "\(status.standardError)")
        }
    }

    @Test(arguments: [("4750", 0, "refused", "can run a program as root", "is setuid root (mode 4750)"),
                      ("4750", 0, "", "", ""),
                      ("4750", -1, "refused", "can run a program as guardian GUARDIAN", "is setuid GUARDIAN (mode 4750)")])
    func setuidProgramOutsideThePackagesIsRefused(mode: String, owner: Int, severity: String, outcome: String, way: String)
        async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withFamily(guardian: guardian, child: child) { directory, config in
                    try await withProgramCopy(of: "/usr/bin/id", runnableBy: child) { program in
                        // chown clears the setuid bit: owner first, then mode. Without a way
                        // (the second case) the group is root's, which the child is not in.
                        chown(program, owner < 0 ? guardian.uid : 0, severity.isEmpty ? 0 : child.gid)
                        chmod(program, mode_t(mode, radix: 8) ?? 0)
                        let result = try await check(config, directory)
                        if severity.isEmpty {
                            // Only root's group may run it: nothing the child can use.
                            #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
                            return
                        }
                        let asWhom = try await run("/usr/sbin/runuser", ["-u", child.name, "--", program, "-u"])
                        #expect(asWhom.standardOutput == "\(owner < 0 ? guardian.uid : 0)\n", "the program runs as its owner")
                        #expect(result.status == 3, "\(result.standardError)")
                        let said = "\(program): \(severity): child \(child.name) \(outcome.replacing("GUARDIAN", with: guardian.name)) "
                            + "(\(program) \(way.replacing("GUARDIAN", with: guardian.name)), which no package ships)"
                        #expect(result.standardError.contains(said), "\(result.standardError)")
                    }
                }
            }
        }
    }

    enum MaskedFile: String, CaseIterable { case inTheGuardiansFolder, inTheChildsFolder, throughALinkInTheChildsFolder }

    /// A file linked to /dev/null is masked (systemd's `mask`, a silenced
    /// login script): every user may write /dev/null, but nothing written
    /// there is read back, so it is no way. The links on the way still
    /// count: in a folder the child owns, the child can point one at a file
    /// of their own.
    @Test(arguments: MaskedFile.allCases)
    func aFileLinkedToDevNullIsMaskedAndOnlyTheLinksFoldersCount(kind: MaskedFile) async throws {
        try await withTemporaryDirectory { homes in
            chmod(homes, 0o755)
            try await withThrowawayUser(prefix: "g", home: "\(homes)/guardian") { guardian in
                try await withThrowawayUser(prefix: "c") { child in
                    try await withFamily(guardian: guardian, child: child) { directory, config in
                        try FileManager.default.createDirectory(atPath: guardian.home, withIntermediateDirectories: false)
                        let owner = kind == .inTheChildsFolder ? child : guardian
                        chown(guardian.home, owner.uid, owner.gid)
                        chmod(guardian.home, 0o755)
                        let masked = "\(guardian.home)/.bashrc"
                        let childsFolder = "\(homes)/childs"
                        if kind == .throughALinkInTheChildsFolder {
                            try FileManager.default.createDirectory(atPath: childsFolder, withIntermediateDirectories: false)
                            chown(childsFolder, child.uid, child.gid)
                            #expect(symlink("/dev/null", "\(childsFolder)/profile") == 0)
                            #expect(symlink("\(childsFolder)/profile", masked) == 0)
                        } else {
                            #expect(symlink("/dev/null", masked) == 0)
                        }
                        let result = try await check(config, directory)
                        switch kind {
                        case .inTheGuardiansFolder:
                            #expect(result.status == 0 && result.standardError.isEmpty, "\(result.standardError)")
                        case .inTheChildsFolder:
                            #expect(result.status == 3, "\(result.standardError)")
                            let said = "\(masked): refused: child \(child.name) can log in as guardian \(guardian.name) (owns \(guardian.home))"
                            #expect(result.standardError.contains(said), "\(result.standardError)")
                        case .throughALinkInTheChildsFolder:
                            // The way is real: the child points the middle link at a script of their own.
                            let pointed = try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/bin/sh", "-c",
                                                                              "echo '# child' > \"$1/mine\" && ln -sfn \"$1/mine\" \"$1/profile\"",
                                                                              "sh", childsFolder])
                            #expect(pointed.status == 0, "\(pointed.standardError)")
                            #expect(result.status == 3, "\(result.standardError)")
                            let said = "\(masked): refused: child \(child.name) can log in as guardian \(guardian.name) (owns \(childsFolder))"
                            #expect(result.standardError.contains(said), "\(result.standardError)")
                        }
                    }
                }
            }
        }
    }

    @Test func sharedUIDWithGuardianIsRefused() async throws {
        try await withThrowawayUser(prefix: "c") { child in
            try await withTemporaryDirectory { homes in
                chmod(homes, 0o755)
                let home = "\(homes)/guardian"
                try await withThrowawayUser(prefix: "g", home: home, sharing: child.uid) { guardian in
                    #expect(guardian.uid == child.uid)
                    try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
                    try "PATH=/usr/bin:/bin\n".write(toFile: "\(home)/.profile", atomically: false, encoding: .utf8)
                    chown(home, guardian.uid, guardian.gid)
                    chown("\(home)/.profile", guardian.uid, guardian.gid)
                    chmod(home, 0o700)
                    try await withFamily(guardian: guardian, child: child) { directory, config in
                        // The attack is real: the child, as itself, rewrites what runs when the guardian logs in.
                        let wrote = try await run("/usr/sbin/runuser", ["-u", child.name, "--", "/bin/sh", "-c",
                                                                        "echo 'echo child was here' >> \"$1\"", "sh", "\(home)/.profile"])
                        #expect(wrote.status == 0, "\(wrote.standardError)")
                        #expect(try String(contentsOfFile: "\(home)/.profile", encoding: .utf8).hasSuffix("echo child was here\n"))

                        let result = try await check(config, directory)
                        #expect(result.status == 3, "\(result.standardError)")
                        let line = try passwdLine(of: guardian.name)
                        #expect(result.standardError.contains("/etc/passwd:\(line): refused: child \(child.name) is guardian "
                            + "\(guardian.name) (uid \(child.uid) is also \(guardian.name)'s): "), "\(result.standardError)")
                        #expect(result.standardError.contains("\(home): refused: child \(child.name) can log in as guardian "
                            + "\(guardian.name) (owns \(home))"), "\(result.standardError)")
                    }
                }
            }
        }
    }

    @Test func sharedUIDWithAnotherAccountIsAWarning() async throws {
        try await withThrowawayUser(prefix: "g") { guardian in
            try await withThrowawayUser(prefix: "c") { child in
                try await withThrowawayUser(prefix: "o", sharing: child.uid) { other in
                    try await withFamily(guardian: guardian, child: child) { directory, config in
                        let result = try await check(config, directory)
                        #expect(result.status == 0, "\(result.standardError)")
                        let line = try passwdLine(of: other.name)
                        #expect(result.standardError == "/etc/passwd:\(line): warning: child \(child.name) is also user \(other.name) "
                            + "(uid \(child.uid) is also \(other.name)'s): one uid is one user to the kernel: "
                            + "whatever \(other.name) may do, the child may\n", "\(result.standardError)")
                    }
                }
            }
        }
    }

    /// The 1-based line of `name`'s entry in /etc/passwd.
    private func passwdLine(of name: String) throws -> Int {
        let lines = try String(contentsOfFile: "/etc/passwd", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasPrefix("\(name):") }) + 1
    }

    /// `/etc/doas.conf` holding `text` (mode 0400, as doas wants it) for `body`;
    /// whatever was there before is put back after, or the file removed.
    private func withDoasConfiguration<R>(_ text: String, _ body: (String) async throws -> R) async throws -> R {
        let file = "/etc/doas.conf"
        let saved = FileManager.default.contents(atPath: file)
        let savedMode = (try? FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) ?? nil
        defer {
            if let saved {
                #expect(FileManager.default.createFile(atPath: file, contents: saved))
                chmod(file, mode_t(savedMode ?? 0o400))
            } else {
                unlink(file)
            }
        }
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, 0o400)
        return try await body(file)
    }

    /// A copy of `source` in /usr/local/bin, where programs live and the check
    /// looks, that only `child` (through its own group) and root may run, so
    /// no other child on the machine meanwhile gains it; removed after.
    private func withProgramCopy<R>(of source: String, runnableBy child: ThrowawayUser,
                                    _ body: (String) async throws -> R) async throws -> R {
        let program = "/usr/local/bin/fctest" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        try copyProgram(source, to: program)
        defer { unlink(program) }
        chown(program, 0, child.gid)
        chmod(program, 0o750)
        return try await body(program)
    }

    /// A rule in a file of its own in /etc/sudoers.d, checked by `visudo`, removed after.
    private func withSudoersRule<R>(_ rule: String, _ body: (String) async throws -> R) async throws -> R {
        let file = "/etc/sudoers.d/fctest" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        try (rule + "\n").write(toFile: file, atomically: false, encoding: .utf8)
        defer { unlink(file) }
        chmod(file, 0o440)
        let valid = try await run("/usr/sbin/visudo", ["-c", "-f", file])
        try #require(valid.status == 0, "visudo rejects the test's rule: \(valid.standardOutput)\(valid.standardError)")
        return try await body(file)
    }
}

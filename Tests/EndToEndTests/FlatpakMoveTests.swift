import Foundation
import Testing
import TestSupport

/// An approved per-user Flatpak app moved into the Guard's root-owned
/// installation by root, as the Guard does after a guardian's approval
/// (GuardKit's FlatpakMover, through `flatpak-move-probe move`), then used by
/// the real child through the real Flatpak, polkitd and system helper: it can
/// no longer be removed, it still updates from its remote, and the Guard's
/// judgement of an update (FlatpakUpdateJudge, `flatpak-move-probe judge`)
/// keeps the approval only for a newer commit of that remote.
@Suite(.serialized, .enabled(if: canRunFlatpak && productExists("familycontrolsd") && productExists("flatpak-move-probe"),
                             "needs root, useradd, Debian's flatpak and dbus, and the built familycontrolsd and flatpak-move-probe"),
       .enabled(if: FlatpakSystemServices.isAvailable,
                "needs polkitd (/usr/lib/polkit-1/polkitd) and flatpak-system-helper (Debian's polkitd and flatpak; .ci/run installs them)"))
struct FlatpakMoveTests {
    let appID = FlatpakChild.appID
    let arch = FlatpakTestRepository.architecture
    let branch = FlatpakTestRepository.branch

    private func services(_ child: FlatpakChild) throws -> FlatpakSystemServices { try #require(child.services) }

    private func guardDeployment(_ child: FlatpakChild, _ commit: String) throws -> String {
        "\(try services(child).installation)/app/\(appID)/\(arch)/\(branch)/\(commit)"
    }

    private func guardActiveCommit(_ child: FlatpakChild) throws -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "\(services(child).installation)/app/\(appID)/\(arch)/\(branch)/active")
    }

    /// The test repository is the trusted remote (a `file://` folder only
    /// root can change; with `key`, signed by it), as `TrustedRemote=` says.
    private func options(_ child: FlatpakChild, key: FlatpakSigningKey? = nil) throws -> [String] {
        try serviceOptions(child)
            + ["--trusted-remote", "\(FlatpakChild.remote) file://\(child.repository.repository)\(key.map { " \($0.keyID)" } ?? "")"]
    }

    /// What the move service and a recovery take: where the state and the Guard's installation are.
    private func serviceOptions(_ child: FlatpakChild) throws -> [String] {
        let services = try services(child)
        return ["--state-dir", "\(child.directory)/state", "--installation-path", services.installation,
                "--flatpak-config-dir", services.configurationDirectory]
    }

    /// `flatpak-move-probe move` (GuardKit's FlatpakMover) as root, with the child's deployment
    /// of `commit` opened as descriptor 3, as the Guard hands it over.
    private func moveCommand(_ child: FlatpakChild, _ commit: String, opening folder: String? = nil,
                             key: FlatpakSigningKey? = nil) throws -> [String] {
        try FileManager.default.createDirectory(atPath: "\(child.directory)/state", withIntermediateDirectories: true)
        return ["/bin/sh", "-c", "exec 3<\"$1\"; shift; exec \"$@\"", "mover", folder ?? child.deployment(commit),
                productPath("flatpak-move-probe"), "move", "--uid", "\(child.user.uid)", "--home", child.home,
                "--app", appID, "--arch", arch, "--branch", branch, "--commit", commit] + (try options(child, key: key))
    }

    private func move(_ child: FlatpakChild, _ commit: String, key: FlatpakSigningKey? = nil) async throws -> ProcessResult {
        let command = try moveCommand(child, commit, key: key)
        return try await run(command[0], Array(command.dropFirst()))
    }

    /// The approval the move printed, as `key=value` lines.
    private func approval(_ moved: ProcessResult) -> [String: String] {
        var values: [String: String] = [:]
        for line in moved.standardOutput.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return values
    }

    /// `flatpak-move-probe judge` (GuardKit's FlatpakUpdateJudge) of the Guard's installation against `approved`.
    private func judge(_ child: FlatpakChild, _ approved: [String: String], key: FlatpakSigningKey? = nil) async throws -> String {
        let arguments = ["judge", "--app", appID, "--arch", arch, "--branch", branch,
                         "--remote", approved["remote"] ?? "", "--url", approved["url"] ?? "",
                         "--commit", approved["commit"] ?? "", "--timestamp", approved["timestamp"] ?? ""] + (try options(child, key: key))
        return try await run(productPath("flatpak-move-probe"), arguments).requireSuccess().standardOutput
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func afterTheMoveTheChildCannotUninstallTheAppAndRunsTheGuardsCopy() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let commit = try child.repository.commit()
            let moved = try await move(child, commit).requireSuccess()
            #expect(approval(moved)["commit"] == commit)
            #expect(approval(moved)["remote"] == FlatpakChild.remote)
            #expect(child.activeCommit() == nil)
            #expect(try guardActiveCommit(child) == commit)

            let uninstall = try await child.flatpak(["uninstall", "-y", "--noninteractive", appID])
            #expect(uninstall.status != 0)
            #expect(uninstall.standardError.contains("not allowed for user"))
            let uninstallUser = try await child.uninstall()
            #expect(uninstallUser.status != 0)
            #expect(uninstallUser.standardError.contains("No installed refs found"))
            #expect(try guardActiveCommit(child) == commit)

            let app = try await child.start()
            defer { app.stop() }
            let info = try app.flatpakInfo()
            #expect(info["Instance"]?["app-path"] == "\(try guardDeployment(child, commit))/files")
            #expect(app.output.contains("\(appID) version 1"))
            // Root's files: the child changes none of them.
            let files = "\(try guardDeployment(child, commit))/files"
            let owner = try FileManager.default.attributesOfItem(atPath: files)[.ownerAccountID] as? Int
            #expect(owner == 0)
            let write = try await child.shell("echo x >> '\(files)/bin/\(FlatpakTestRepository.command)' || touch '\(files)/new' || rm -rf '\(files)/bin'")
            #expect(write.status != 0)
            #expect(FileManager.default.fileExists(atPath: "\(files)/bin/\(FlatpakTestRepository.command)"))
        }
    }

    /// The Guard's own unit hides `/proc/sys` (`ProcSubset=pid`), and
    /// ostree reads `/proc/sys/kernel/random/boot_id` to open a repository:
    /// the move cannot run inside the Guard's sandbox as it is.
    @Test(.enabled(if: canAnalyzeUnits, "needs systemd-analyze to read the unit's system call filter"))
    func theGuardsOwnUnitSandboxKeepsFlatpakFromOpeningItsRepository() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let commit = try child.repository.commit()
            let command = try GuardSandbox.unit().wrap(try moveCommand(child, commit))
            let moved = try await run(command[0], Array(command.dropFirst()))
            #expect(moved.status != 0)
            #expect(moved.standardError.contains("/proc/sys/kernel/random/boot_id"))
            #expect(child.activeCommit() == commit)
        }
    }

    /// The move service's own sandbox, read from the shipped
    /// `familycontrols-flatpak@.service`: the Guard's unit with `/proc` whole
    /// (no `ProcSubset=pid`), the network (a remote over https) and
    /// `CAP_DAC_OVERRIDE` (setting the child's copy aside is a rename between
    /// folders of the child's, 0755: without it, `mkdirat: Permission
    /// denied`); the rest of the Guard's capabilities, `NoNewPrivileges=`,
    /// the system call filter and the read-only `/usr` and `/etc` hold.
    /// (Flatpak's export triggers, which run in bubblewrap, fail there with
    /// a warning and nothing else.)
    @Test(.enabled(if: canAnalyzeUnits, "needs systemd-analyze to read the unit's system call filter"))
    func theMoveRunsInTheMoveServicesUnitSandbox() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let commit = try child.repository.commit()
            let unit = try ShippedUnit(parsing: String(contentsOfFile: "\(packageRoot)/Config/systemd/familycontrols-flatpak@.service",
                                                       encoding: .utf8))
            let sandbox = try GuardSandbox.unit(unit)
            #expect(sandbox.capabilities.contains("CAP_DAC_OVERRIDE"))
            let command = sandbox.wrap(try moveCommand(child, commit))
            let moved = try await run(command[0], Array(command.dropFirst()))
            #expect(moved.status == 0, "\(moved.standardError.split(separator: "\n").joined(separator: " | "))")
            #expect(try guardActiveCommit(child) == commit)
            #expect(child.activeCommit() == nil)
            let app = try await child.start()
            app.stop()
        }
    }

    /// The Guard's way: `familycontrols-flatpak.socket` (`Accept=yes`), here
    /// `systemd-socket-activate --accept --inetd`, starts
    /// `familycontrolsd --flatpak-move-connection` for each connection, and
    /// the Guard's client (FlatpakMoveClient, `flatpak-move-probe move --service`) sends the request.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate"),
                   "needs systemd-socket-activate (Debian's systemd)"))
    func theGuardAsksTheMoveServiceThroughItsSocket() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let commit = try child.repository.commit()
            let service = try await FlatpakMoveServiceProcess.start(for: child, options: try serviceOptions(child))
            defer { service.stop() }
            let socket = service.socket

            // A folder that is not the deployment the Guard identified: the service refuses, nothing moves.
            let wrong = try moveCommand(child, commit, opening: child.home) + ["--service", socket]
            let refused = try await run(wrong[0], Array(wrong.dropFirst()))
            #expect(refused.status != 0)
            #expect(refused.standardError.contains("the Flatpak move service: the per-user deployment: the deployment of \(commit) is not the folder the Guard identified"),
                    "\(refused.standardError)")
            #expect(child.activeCommit() == commit)
            #expect(try guardActiveCommit(child) == nil)

            let command = try moveCommand(child, commit) + ["--service", socket]
            let moved = try await run(command[0], Array(command.dropFirst()))
            #expect(moved.status == 0, "\(moved.standardError)")
            #expect(approval(moved)["commit"] == commit)
            #expect(try guardActiveCommit(child) == commit)
            #expect(child.activeCommit() == nil)
        }
    }

    @Test func theChildsUpdateMovesTheAppAndTheApprovalFollowsANewerCommitOfTheSameRemote() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let first = try child.repository.commit()
            let approved = approval(try await move(child, first).requireSuccess())
            #expect(try await judge(child, approved) == "unchanged")
            // Commit times are in seconds: the update's must be later.
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2) }

            try await child.flatpak(["update", "-y", "--noninteractive", appID]).requireSuccess()
            #expect(try guardActiveCommit(child) == second)
            #expect(!FileManager.default.fileExists(atPath: try guardDeployment(child, first)))
            let verdict = try await judge(child, approved)
            #expect(verdict.hasPrefix("approved \(second) "))
            let app = try await child.start()
            defer { app.stop() }
            #expect(app.output.contains("\(appID) version 2"))
        }
    }

    @Test func aDowngradeNeedsAGuardian() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let first = try child.repository.commit()
            var approved = approval(try await move(child, first).requireSuccess())
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2) }
            try await child.flatpak(["update", "-y", "--noninteractive", appID]).requireSuccess()
            let verdict = try await judge(child, approved)
            let timestamp = try #require(verdict.split(separator: " ").last.map(String.init))
            approved["commit"] = second
            approved["timestamp"] = timestamp

            // Flatpak refuses the child a chosen commit through the system helper.
            let childDowngrade = try await child.flatpak(["update", "-y", "--noninteractive", "--commit=\(first)", appID])
            #expect(childDowngrade.status != 0)
            #expect(childDowngrade.standardError.contains("without root permissions"))
            #expect(try guardActiveCommit(child) == second)
            // Root can: the approval does not follow.
            try await run("/usr/bin/flatpak", ["update", "--installation=familycontrols", "-y", "--noninteractive",
                                               "--commit=\(first)", appID],
                          environment: ["FLATPAK_CONFIG_DIR": try services(child).configurationDirectory]).requireSuccess()
            #expect(try guardActiveCommit(child) == first)
            // The first commit is the root of the remote's history, and the repository holds it again.
            #expect(try await judge(child, approved) == "needs-guardian from \(second) to \(first): the commit does not descend from the approved one")
        }
    }

    @Test func aCopyFromAnotherRemoteNeedsAGuardian() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let first = try child.repository.commit()
            let approved = approval(try await move(child, first).requireSuccess())
            // Another repository publishing the same app ID, newer.
            let other = try await offload { try FlatpakTestRepository() }
            defer { other.remove() }
            try await Task.sleep(for: .seconds(1.1))
            let foreign = try await offload { try other.publish(version: 9) }
            let environment: [String: String?] = ["FLATPAK_CONFIG_DIR": try services(child).configurationDirectory]
            try await run("/usr/bin/flatpak", ["remote-add", "--installation=familycontrols", "--no-gpg-verify", "other",
                                               other.repository], environment: environment).requireSuccess()
            try await run("/usr/bin/flatpak", ["install", "--installation=familycontrols", "--reinstall", "-y",
                                               "--noninteractive", "other", appID], environment: environment).requireSuccess()
            #expect(try guardActiveCommit(child) == foreign)
            let verdict = try await judge(child, approved)
            #expect(verdict == "needs-guardian from \(first) to \(foreign): the deployed commit is not the one remote \(FlatpakChild.remote) gave")
        }
    }

    @Test func anAppTheGuardsInstallationHoldsAtAnotherCommitIsLeftAloneAndTheChildsCopyStays() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let first = try child.repository.commit()
            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2) }
            // Another approval brought the newer commit here already.
            let environment: [String: String?] = ["FLATPAK_CONFIG_DIR": try services(child).configurationDirectory]
            try await run("/usr/bin/flatpak", ["remote-add", "--installation=familycontrols", "--no-gpg-verify",
                                               FlatpakChild.remote, child.repository.repository], environment: environment).requireSuccess()
            try await run("/usr/bin/flatpak", ["install", "--installation=familycontrols", "-y", "--noninteractive",
                                               FlatpakChild.remote, appID], environment: environment).requireSuccess()

            let moved = try await move(child, first)
            #expect(moved.status != 0)
            #expect(moved.standardError.contains("it holds \(second) of this app for another approval, not the approved \(first)"),
                    "\(moved.standardError)")
            #expect(try guardActiveCommit(child) == second)
            #expect(child.activeCommit() == first)
        }
    }

    @Test func aRemoteTheChildCanWriteIsRefusedAndTheChildsCopyStays() async throws {
        try await withFlatpakChild(installed: false, systemHelper: true) { child in
            // The child's own copy of the repository, as their remote: they could publish "updates" there.
            try await run("/bin/cp", ["-a", child.repository.repository, "\(child.home)/repo"]).requireSuccess()
            try await run("/bin/chown", ["-R", "\(child.user.uid):\(child.user.gid)", "\(child.home)/repo"]).requireSuccess()
            try await child.flatpak(["remote-add", "--user", "--no-gpg-verify", FlatpakChild.remote, "\(child.home)/repo"]).requireSuccess()
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", FlatpakChild.remote, appID]).requireSuccess()
            let commit = try child.repository.commit()
            let moved = try await move(child, commit)
            #expect(moved.status != 0)
            #expect(moved.standardError.contains("someone other than root can change"))
            #expect(child.activeCommit() == commit)
            #expect(try guardActiveCommit(child) == nil)
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gpg"), "needs gpg (Debian's gnupg)"))
    func aRemoteThatVerifiesSignaturesIsMovedWithItsKeys() async throws {
        try await withFlatpakChild(installed: false, systemHelper: true) { child in
            let key = try await offload { try FlatpakSigningKey(in: "\(child.directory)/signing") }
            defer { key.stop() }
            try await offload { try child.repository.sign(with: key) }
            try await child.flatpak(["remote-add", "--user", "--gpg-import=\(key.publicKey)", FlatpakChild.remote,
                                     child.repository.repository]).requireSuccess()
            try await child.flatpak(["install", "--user", "-y", "--noninteractive", FlatpakChild.remote, appID]).requireSuccess()
            let first = try child.repository.commit()
            let approved = approval(try await move(child, first, key: key).requireSuccess())
            #expect(try guardActiveCommit(child) == first)
            let remotes = try await run("/usr/bin/flatpak", ["remotes", "--installation=familycontrols", "--columns=name,options"],
                                        environment: ["FLATPAK_CONFIG_DIR": try services(child).configurationDirectory])
            #expect(!remotes.standardOutput.contains("no-gpg-verify"), "\(remotes.standardOutput)")

            try await Task.sleep(for: .seconds(1.1))
            let second = try await offload { try child.repository.publish(version: 2, signedWith: key) }
            // From a remote that verifies signatures the helper has the child
            // pull into a revokefs-fuse mount: that needs /dev/fuse, 0666 on a
            // desktop, 0600 in many containers.
            let fuse = try FileManager.default.attributesOfItem(atPath: "/dev/fuse")[.posixPermissions] as? Int ?? 0
            let update = try await child.flatpak(["update", "-y", "--noninteractive", appID])
            guard fuse & 0o006 == 0o006 else {
                #expect(update.status != 0)
                #expect(update.standardError.contains("/dev/fuse"), "\(update.standardError)")
                #expect(try guardActiveCommit(child) == first)
                let app = try await child.start()
                app.stop()
                return
            }
            #expect(update.status == 0, "\(update.standardError)")
            #expect(try guardActiveCommit(child) == second)
            #expect(try await judge(child, approved, key: key).hasPrefix("approved \(second) "))

            // A commit the key did not sign is not taken, by Flatpak's own check.
            try await Task.sleep(for: .seconds(1.1))
            let unsigned = try await offload { try child.repository.publish(version: 3) }
            let refused = try await child.flatpak(["update", "-y", "--noninteractive", appID])
            #expect(refused.status != 0)
            #expect(try guardActiveCommit(child) == second)
            #expect(try guardActiveCommit(child) != unsigned)
        }
    }

    @Test func aMoverKilledAtAnyPointLeavesOneRunnableCopy() async throws {
        try await withFlatpakChild(systemHelper: true) { child in
            let commit = try child.repository.commit()
            let environment: [String: String?] = ["FLATPAK_CONFIG_DIR": try services(child).configurationDirectory]
            for delay in [0.0, 0.03, 0.08, 0.15, 0.25, 0.4] {
                let command = try moveCommand(child, commit)
                let mover = Process()
                mover.executableURL = URL(fileURLWithPath: command[0])
                mover.arguments = Array(command.dropFirst())
                mover.standardOutput = FileHandle.nullDevice
                mover.standardError = FileHandle.nullDevice
                try mover.run()
                try await Task.sleep(for: .seconds(delay))
                kill(mover.processIdentifier, SIGKILL)
                mover.waitUntilExit()
                // The flatpak it had started dies with it (HelperProcess's
                // parent-death signal): a moment for that kill to land, so a
                // flatpak that outlived it would be seen finishing its job here.
                try await Task.sleep(for: .seconds(0.5))

                let childCopy = child.activeCommit() == commit
                let guardCopy = try guardActiveCommit(child) == commit
                #expect(childCopy || guardCopy, "killed after \(delay) s: neither copy is installed")
                let recovered = try await run(productPath("familycontrolsd"), ["--flatpak-recover"] + (try serviceOptions(child)))
                    .requireSuccess()
                #expect((child.activeCommit() == commit) != (try guardActiveCommit(child) == commit),
                        "after recovery from a kill at \(delay) s, exactly one copy: \(recovered.standardOutput)")
                print("killed after \(delay) s: the child's copy \(childCopy), the Guard's \(guardCopy); recovery: \(recovered.standardOutput)")
                let app = try await child.start()
                app.stop()

                // Back to the child's copy alone for the next round.
                if try guardActiveCommit(child) != nil {
                    try await run("/usr/bin/flatpak", ["uninstall", "--installation=familycontrols", "-y", "--noninteractive", appID],
                                  environment: environment).requireSuccess()
                }
                if child.activeCommit() == nil {
                    try await child.flatpak(["install", "--user", "-y", "--noninteractive", "--reinstall", FlatpakChild.remote, appID])
                        .requireSuccess()
                }
            }
        }
    }
}

import Foundation
import Testing
import TestSupport

extension MachinePackageTests {
    /// The shipped Ansible role installing the Debian package on this very
    /// machine (`-c local`, apt with the `.deb` from `Config/build-deb.sh`), its
    /// drop-ins in the real `/etc/familycontrols/familycontrols.conf.d`, checked by
    /// the installed Guard; then the package purged and the machine's files put
    /// back as they were.
    @Suite(.serialized,
           .enabled(if: getuid() == 0, "needs root: it installs and purges a package"),
           .enabled(if: AnsiblePlaybook.program != nil, "needs ansible-playbook (python3 -m pip install ansible-core)"),
           .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"),
           .enabled(if: DebianMachine.hasDebianTools, "needs dpkg-deb, dpkg-shlibdeps and dpkg-gencontrol (apt-get install dpkg-dev)"),
           .enabled(if: DebianMachine.status() == "not-installed", "familycontrols is installed here: the test would remove it"),
           .enabled(if: !FileManager.default.fileExists(atPath: DebianMachine.state),
                    "/var/lib/familycontrols exists: purging the package would delete that store"),
           .enabled(if: !FileManager.default.fileExists(atPath: "/etc/familycontrols/familycontrols.conf.d"),
                    "/etc/familycontrols/familycontrols.conf.d exists: the test would remove it"),
           .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
    struct AnsibleRolePackageTests {
        private let folder = "/etc/familycontrols/familycontrols.conf.d"
        private let cache = "/var/cache/familycontrols-ansible"

        @Test func theRoleInstallsThePackageWhoseGuardReadsItsDropInsAndASecondRunChangesNothing() async throws {
            try await MachineInstallation.exclusively {
                try await withThrowawayUser(prefix: "t") { teacher in
                    try await withThrowawayUser(prefix: "q") { pupil in
                        let deb = try await ReleaseBuild.debianPackage()
                        let before = try MachineFiles.take(DebianMachine.conffiles + DebianMachine.pamStack)
                        defer {
                            try? FileManager.default.removeItem(atPath: folder)
                            try? FileManager.default.removeItem(atPath: cache)
                            if DebianMachine.status() != "not-installed" {
                                _ = try? TestSupport.run("/usr/bin/dpkg", ["--purge", "familycontrols"],
                                                         environment: ["DEBIAN_FRONTEND": "noninteractive", "FAMILYCONTROLS_KEEP_LOCKS": "yes"])
                            }
                            try? before.restore()
                        }
                        let playbook = try AnsiblePlaybook()
                        let host = AnsiblePlaybook.Host.local("here", [
                            "familycontrols_package_path": deb,
                            "familycontrols_families": [["name": "5B", "guardians": [teacher.name], "children": [pupil.name]]],
                        ])
                        let first = try await playbook.run([host])
                        #expect(first.succeeded, "\(first)")
                        #expect(DebianMachine.status() == "installed")
                        let dropIn = "\(folder)/50-ansible-family-5B.conf"
                        #expect(try String(contentsOfFile: dropIn, encoding: .utf8)
                            .hasSuffix("[Family 5B]\nGuardians=\(teacher.name)\nChildren=\(pupil.name)\n"))
                        // The installed Guard reads it, with the package's main file and PAM services.
                        let check = try await run("/usr/sbin/familycontrolsd", ["--check-config", "--configuration-only"])
                        #expect(check.status == 0, "\(check.standardError)")
                        #expect(check.standardOutput.contains("with 1 drop-in in \(folder): OK"), "\(check.standardOutput)")

                        let second = try await playbook.run([host])
                        #expect(second.succeeded && second.changed("here") == 0, "\(second)")
                    }
                }
            }
        }
    }
}

import Foundation
import TestSupport
import Testing

/// The Debian package where it runs: installed with `dpkg -i` in a Debian
/// booted by `systemd-nspawn` (``LogindContainer``, systemd as PID 1 with
/// logind and the journal), its shipped units started by that systemd with
/// their hardening, the Guard reached through its socket unit.
@Suite(.serialized,
       .enabled(if: LogindContainer.isAvailable, "needs root, systemd-nspawn, nsenter, busctl and debootstrap (or the root it made)"),
       .enabled(if: DebianMachine.hasDebianTools, "needs dpkg-deb, dpkg-shlibdeps and dpkg-gencontrol (apt-get install dpkg-dev)"))
struct BootedSystemTests {
    /// Where the package's folder is seen inside the container.
    private static let packageFolder = "/mnt/familycontrols"

    /// Boots the packaged root with the package's folder in reach, installs
    /// it with `dpkg -i`, and runs `body`.
    private func withPackageInstalled(_ body: (LogindContainer) async throws -> Void) async throws {
        let deb = try await ReleaseBuild.debianPackage()
        let url = URL(fileURLWithPath: deb)
        try await LogindContainer.with(packages: true, binds: ["\(url.deletingLastPathComponent().path):\(Self.packageFolder)"]) { container in
            let installed = try await inside(container, ["/usr/bin/dpkg", "-i", "\(Self.packageFolder)/\(url.lastPathComponent)"])
            try #require(installed.status == 0, "\(installed.standardOutput)\(installed.standardError)")
            try await body(container)
        }
    }

    /// A command inside the container, with the environment a root shell there has.
    private func inside(_ container: LogindContainer, _ arguments: [String]) async throws -> ProcessResult {
        try await container.run(["/usr/bin/env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive",
                                 "LANG=C.UTF-8"] + arguments)
    }

    @Test func theInstalledUnitsServeUnderBootedSystemdWithTheirHardeningAndJournal() async throws {
        try await withPackageInstalled { container in
            // The socket unit answers; the service, activated by it or started
            // by the postinst, runs as systemd's notify service.
            let status = try await inside(container, ["/usr/bin/familyctl", "status"])
            #expect(status.status == 0, "\(status.standardOutput)\(status.standardError)")
            let active = try await inside(container, ["/usr/bin/systemctl", "is-active", "familycontrolsd.socket", "familycontrolsd.service"])
            #expect(active.standardOutput == "active\nactive\n", "\(active.standardOutput)\(active.standardError)")
            let enabled = try await inside(container, ["/usr/bin/systemctl", "is-enabled", "familycontrolsd.socket"])
            #expect(enabled.standardOutput == "enabled\n", "\(enabled.standardOutput)\(enabled.standardError)")

            // The unit's hardening holds on the running Guard: no new
            // privileges, and only the capabilities the unit names.
            let mainPID = try await inside(container, ["/usr/bin/systemctl", "show", "-p", "MainPID", "--value", "familycontrolsd.service"])
                .standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(Int(mainPID).map { $0 > 0 } == true, "no main process: \(mainPID)")
            let procStatus = try await inside(container, ["/bin/cat", "/proc/\(mainPID)/status"]).standardOutput
            #expect(procStatus.contains("\nNoNewPrivs:\t1\n"), "\(procStatus)")
            let bounding = procStatus.split(separator: "\n").first { $0.hasPrefix("CapBnd:") }
                .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
            // CAP_SYS_ADMIN (21) is not among the unit's capabilities.
            #expect(bounding.map { $0 != 0 && $0 & (1 << 21) == 0 } == true, "\(procStatus)")

            // Its journal is readable there: systemd's line once the Guard said READY=1.
            let journal = try await inside(container, ["/usr/bin/journalctl", "--no-pager", "-o", "cat", "-u", "familycontrolsd.service"])
            #expect(journal.status == 0, "\(journal.standardError)")
            #expect(journal.standardOutput.contains("Started familycontrolsd.service")
                        || journal.standardOutput.contains("Started FamilyControls Guard"), "\(journal.standardOutput)")
        }
    }
}

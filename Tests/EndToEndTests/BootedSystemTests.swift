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

            // The inspector where /usr/sbin/familycontrolsd looks for it, as a file it runs: root's, and no one else may write it.
            let inspector = try await inside(container, ["/usr/bin/stat", "-c", "%U %a %F", DebianMachine.inspector])
            #expect(inspector.standardOutput == "root 755 regular file\n", "\(inspector.standardOutput)\(inspector.standardError)")

            // Its journal is readable there: systemd's line once the Guard said READY=1.
            let journal = try await inside(container, ["/usr/bin/journalctl", "--no-pager", "-o", "cat", "-u", "familycontrolsd.service"])
            #expect(journal.status == 0, "\(journal.standardError)")
            #expect(journal.standardOutput.contains("Started familycontrolsd.service")
                        || journal.standardOutput.contains("Started FamilyControls Guard"), "\(journal.standardOutput)")
        }
    }

    /// A command inside the container as `user`, with `input` on its standard input.
    private func inside(_ container: LogindContainer, as user: String, _ arguments: [String],
                        input: String = "") async throws -> ProcessResult {
        try await run("/usr/bin/nsenter", ["-t", String(container.initPID), "-a", "/usr/sbin/runuser", "-u", user, "--",
                                           "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"] + arguments, input: input)
    }

    /// The whole flow where families run it: the shipped units under booted
    /// systemd, the family named in the shipped configuration and reloaded,
    /// the demo installed as the administrators' guide says, a real logind
    /// session of the child's, the child's request through the socket unit,
    /// a guardian's approval through the shipped PAM service, and the app's
    /// monitor started by the Guard in the child's logind session. The app is
    /// identified, and its desktop entry read, by the packaged inspector, which
    /// the Guard starts as nobody from within the unit's sandbox.
    @Test func aChildsRequestApprovedByAGuardianRunsItsMonitorInTheChildsLogindSession() async throws {
        try await withPackageInstalled { container in
            let child = LogindContainer.childName, guardian = "fcguard"
            let password = (0..<20).map { _ in "abcdefghjkmnpqrstuvwxyz23456789".randomElement()! }.map(String.init).joined()
            try await inside(container, ["/usr/sbin/useradd", "-m", "-s", "/bin/sh", guardian]).requireSuccess()
            let chpasswd = try await run("/usr/bin/nsenter", ["-t", String(container.initPID), "-a", "/usr/sbin/chpasswd"],
                                         input: "\(guardian):\(password)\n")
            try #require(chpasswd.status == 0, "chpasswd failed")
            try await inside(container, ["/bin/sed", "-i", "s/^Guardians=$/Guardians=\(guardian)/; s/^Children=$/Children=\(child)/",
                                         "/etc/familycontrols/familycontrols.conf"]).requireSuccess()
            let reload = try await inside(container, ["/usr/bin/systemctl", "reload", "familycontrolsd.service"])
            #expect(reload.status == 0, "\(reload.standardOutput)\(reload.standardError)")

            // The administrators' guide's recipe, with the package's demo folder.
            let app = "/home/\(child)/Applications/org.familycontrols.Demo"
            try await inside(container, as: child, ["/bin/mkdir", "-p", app]).requireSuccess()
            try await inside(container, ["/bin/sh", "-c", "install -o \(child) -g \(child) /usr/lib/familycontrols/demo/* \(app)/"])
                .requireSuccess()

            // A login's session (class user); a background one a service opens runs no monitor.
            let background = try await container.openSession()
            let session = try await container.openSession(sessionClass: "user")
            let request = try RunningApp(arguments: ["/usr/bin/nsenter", "-t", String(container.initPID), "-a", "/usr/sbin/runuser",
                                                     "-u", child, "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
                                                     "\(app)/familycontrols-demo", "request", "--member", "child", "--stdin"])
            defer { request.stop() }
            let id = try await request.waitForPendingRequest()
            let approved = try await inside(container, as: guardian, ["/usr/bin/familyctl", "approve", String(id), "--stdin"],
                                            input: "\(password)\n")
            #expect(approved.status == 0, "\(approved.standardError)")
            request.endInput()
            #expect(await request.exitStatus() == 0, "\(request.standardError)")
            #expect(request.standardOutput.contains("status: approved"), "\(request.standardOutput)")

            // The monitor, in the child's logind session, beating in the Guard's journal.
            var monitor: [String: Any]?
            var listing = ""
            for _ in 0..<100 {
                let listed = try await inside(container, ["/usr/bin/familyctl", "monitors", "--json"])
                listing = listed.standardOutput + listed.standardError
                let object = try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
                monitor = (object?["monitors"] as? [[String: Any]])?.first {
                    $0["session"] as? String == session.id && $0["state"] as? String == "running"
                }
                if monitor != nil { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            if monitor == nil {
                let journal = try await inside(container, ["/usr/bin/journalctl", "--no-pager", "-o", "cat", "-u", "familycontrolsd.service"])
                let sessions = try await inside(container, ["/usr/bin/loginctl", "list-sessions", "--no-legend"])
                let stack = try await inside(container, ["/bin/cat", "/etc/pam.d/common-session"])
                Issue.record("monitors: \(listing)\nsessions: \(sessions.standardOutput)\nstack: \(stack.standardOutput)\njournal: \(journal.standardOutput.prefix(6000))")
            }
            let running = try #require(monitor, "no monitor runs in logind's session \(session.id)")
            let listed = try await inside(container, ["/usr/bin/familyctl", "monitors", "--json"]).standardOutput
            let object = try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [String: Any]
            let sessions = ((object?["monitors"] as? [[String: Any]]) ?? []).compactMap { $0["session"] as? String }
            #expect(sessions == [session.id], "a monitor in the background session \(background.id) or a PAM copy: \(listed)")
            #expect(running["user"] as? String == child)
            #expect(running["appID"] as? String == "org.familycontrols.Demo")
            let pid = try #require(running["pid"] as? Int)
            let owner = try await inside(container, ["/bin/ps", "-o", "user=", "-p", String(pid)])
            #expect(owner.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == child, "\(owner.standardOutput)")
            var beats = ""
            for _ in 0..<50 {
                beats = try await inside(container, ["/usr/bin/journalctl", "--no-pager", "-o", "cat", "-u", "familycontrolsd.service"])
                    .standardOutput
                if beats.contains("monitor org.familycontrols.Demo for \(child): ") && beats.contains("heartbeat") { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(beats.contains("heartbeat"), "\(beats.suffix(3000))")
            #expect(!beats.contains("inspector"), "\(beats.suffix(3000))")
            #expect(!beats.contains(password), "the guardian's password reached the journal")
        }
    }
}

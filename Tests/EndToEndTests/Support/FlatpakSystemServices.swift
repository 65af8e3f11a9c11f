import Foundation
import TestSupport

/// What a non-root `flatpak` needs to change a root-owned installation, on a
/// private bus: a system bus built from Debian's own `system.conf` (with its
/// `system.d` policies for polkit and the Flatpak system helper), `polkitd`,
/// and `flatpak-system-helper`; and the Guard's installation, declared in a
/// `FLATPAK_CONFIG_DIR` of the test's own, so nothing is written to
/// `/etc/flatpak`.
///
/// One file is written outside the test's folder: polkit has no switch for
/// its rules folder, so the rule standing in for the child's active local
/// session (no logind here) goes to `/etc/polkit-1/rules.d`, named for the
/// throwaway child and matching only that user name; ``stop()`` removes it,
/// and every test reaches ``stop()`` through the child's teardown, failing or
/// not. A test process killed outright (SIGKILL, a timeout) leaves the rule
/// behind, matching only a user who no longer exists:
/// `/etc/polkit-1/rules.d/00-familycontrols-test-*.rules`.
final class FlatpakSystemServices: @unchecked Sendable {
    static let polkitd = "/usr/lib/polkit-1/polkitd"
    static let systemHelper = "/usr/libexec/flatpak-system-helper"
    static let rulesFolder = "/etc/polkit-1/rules.d"

    /// Whether the machine has what these tests need (`.ci/run` installs polkitd and flatpak).
    static var isAvailable: Bool {
        let files = FileManager.default
        return files.isExecutableFile(atPath: polkitd) && files.isExecutableFile(atPath: systemHelper)
            && files.fileExists(atPath: "/usr/share/dbus-1/system.conf") && files.fileExists(atPath: rulesFolder)
    }

    let socket: String
    /// `FLATPAK_CONFIG_DIR`: `installations.d/familycontrols.conf`.
    let configurationDirectory: String
    /// The Guard's installation (`Path=`).
    let installation: String
    let rule: String
    private var processes: [Process] = []

    var address: String { "unix:path=\(socket)" }

    init(in directory: String, child: String) throws {
        socket = "\(directory)/system_bus_socket"
        configurationDirectory = "\(directory)/flatpak-config"
        installation = "\(directory)/guard-installation"
        rule = "\(Self.rulesFolder)/00-familycontrols-test-\(child).rules"
        let files = FileManager.default
        try files.createDirectory(atPath: "\(configurationDirectory)/installations.d", withIntermediateDirectories: true)
        try files.createDirectory(atPath: installation, withIntermediateDirectories: true)
        try "[Installation \"familycontrols\"]\nPath=\(installation)\nStorageType=harddisk\n"
            .write(toFile: "\(configurationDirectory)/installations.d/familycontrols.conf", atomically: true, encoding: .utf8)
        // YES for the actions Debian's policy grants an active local user, the
        // default (an administrator's password, with no agent: refused) for the rest.
        try """
            polkit.addRule(function(action, subject) {
                if (subject.user != "\(child)" || action.id.indexOf("org.freedesktop.Flatpak.") != 0) return polkit.Result.NOT_HANDLED;
                var active = ["app-update", "runtime-update", "update-remote", "modify-repo", "appstream-update", "metadata-update"];
                return active.indexOf(action.id.substring(24)) >= 0 ? polkit.Result.YES : polkit.Result.AUTH_ADMIN_KEEP;
            });

            """.write(toFile: rule, atomically: true, encoding: .utf8)
        do {
            let system = try String(contentsOfFile: "/usr/share/dbus-1/system.conf", encoding: .utf8)
            let kept = system.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
                !["<user>", "<fork/>", "<pidfile>", "<syslog/>", "<servicehelper>", "<standard_system_servicedirs/>"]
                    .contains { line.contains($0) }
            }.map { line -> String in
                if line.contains("<listen>") { return "  <listen>unix:path=\(socket)</listen>" }
                if line.contains("<includedir>system.d</includedir>") { return "  <includedir>/usr/share/dbus-1/system.d</includedir>" }
                return String(line)
            }
            let configuration = "\(directory)/system-bus.conf"
            try kept.joined(separator: "\n").write(toFile: configuration, atomically: true, encoding: .utf8)
            try start("/usr/bin/dbus-daemon", ["--config-file=\(configuration)", "--nofork", "--nopidfile"], environment: [:])
            for _ in 0..<200 where !files.fileExists(atPath: socket) { usleep(25_000) }
            guard files.fileExists(atPath: socket) else { throw FixtureError("dbus-daemon made no socket at \(socket)") }
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "FLATPAK_CONFIG_DIR": configurationDirectory,
                               "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
            try start(Self.polkitd, ["--no-debug"], environment: environment)
            try start(Self.systemHelper, [], environment: environment)
            try waitForNames(["org.freedesktop.PolicyKit1", "org.freedesktop.Flatpak.SystemHelper"])
        } catch {
            stop()
            throw error
        }
    }

    private func start(_ program: String, _ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        processes.append(process)
    }

    private func waitForNames(_ names: [String]) throws {
        for _ in 0..<200 {
            let listed = try run("/usr/bin/busctl", ["--address=\(address)", "list", "--no-legend"]).standardOutput
            if names.allSatisfy({ listed.contains($0) }) { return }
            usleep(25_000)
        }
        throw FixtureError("\(names.joined(separator: ", ")) did not appear on the private system bus within 5 s")
    }

    /// Removes the polkit rule, then ends the services and the bus.
    func stop() {
        try? FileManager.default.removeItem(atPath: rule)
        for process in processes.reversed() where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        processes = []
    }
}

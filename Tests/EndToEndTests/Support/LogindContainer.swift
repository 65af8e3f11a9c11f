import Foundation
import SystemKit
import TestSupport
import Testing

/// A Debian bookworm booted by `systemd-nspawn` (systemd as its PID 1, the
/// system bus, systemd-logind), where real logind sessions are opened,
/// locked and ended: this machine runs no systemd itself.
///
/// The root is made once by `debootstrap` (a minute or two, from Debian's
/// archive) in ``root`` and reused; each boot is `--volatile=overlay`, so it
/// stays as made. The container's `/run/dbus` is a folder of the test's, so
/// the host reaches its system bus at ``busAddress``; the container shares
/// the host's users' numbering (no user namespace), and its child,
/// ``childName``, has a uid no throwaway user of the host gets.
struct LogindContainer {
    static let root = "/var/tmp/familycontrols-logind-bookworm"
    /// A second root, with the libraries the Debian package depends on, for
    /// installing it inside (``with(packages:binds:_:)``).
    static let packagedRoot = "/var/tmp/familycontrols-booted-bookworm"
    /// What the package depends on beyond the logind root: installed by
    /// `debootstrap`, so `dpkg -i` needs no archive in a booted container.
    static let packageDependencies = ["libqrencode4", "libsodium23", "libsqlite3-0", "e2fsprogs", "libpam-modules",
                                      "libpam-runtime", "procps"]
    static let childName = "fcchild"
    static let childUID: UInt32 = 61_999

    /// Whether a container can be made here: root, `systemd-nspawn`, and the
    /// root made already or `debootstrap` to make it.
    static var isAvailable: Bool {
        let files = FileManager.default
        return getuid() == 0 && files.isExecutableFile(atPath: "/usr/bin/systemd-nspawn")
            && files.isExecutableFile(atPath: "/usr/bin/nsenter") && files.isExecutableFile(atPath: "/usr/bin/busctl")
            && (files.fileExists(atPath: "\(root)/usr/lib/systemd/systemd-logind")
                || files.isExecutableFile(atPath: "/usr/sbin/debootstrap"))
    }

    let nspawn: RunningApp
    /// The container's PID 1, as the host numbers it.
    let initPID: pid_t
    let busDirectory: String

    var busAddress: String { "unix:path=\(busDirectory)/system_bus_socket" }

    /// Makes the root when it is not there yet, boots the container, waits
    /// for logind to answer on its bus, runs `body`, and stops it. When the
    /// root cannot be made or the container does not boot, the test is
    /// cancelled (skipped), saying why.
    /// With `packages`, boots ``packagedRoot`` (made with them); `binds` are
    /// `--bind-ro=` arguments of `systemd-nspawn` (`HOST:INSIDE`).
    static func with<R>(packages: Bool = false, binds: [String] = [], _ body: (LogindContainer) async throws -> R) async throws -> R {
        let root = packages ? packagedRoot : Self.root
        do {
            try await makeRoot(root, packages: packages ? packageDependencies : [])
        } catch {
            try Test.cancel("no Debian root for systemd-nspawn could be made: \(error)")
        }
        let busDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: busDirectory) }
        let nspawn = try RunningApp(arguments: ["/usr/bin/systemd-nspawn", "--register=no", "--keep-unit", "--console=passive",
                                                "--volatile=overlay", "-D", root, "-b", "--bind=\(busDirectory):/run/dbus"]
                                               + binds.map { "--bind-ro=\($0)" })
        defer { nspawn.stop() }
        var initPID: pid_t?
        let booted = await eventually(timeout: .seconds(60)) {
            // Asked again each time: nspawn's first child is a short-lived
            // helper that forks the container's PID 1 and exits.
            initPID = containerInit(of: nspawn.process.processIdentifier)
            guard initPID != nil, FileManager.default.fileExists(atPath: "\(busDirectory)/system_bus_socket") else { return false }
            let listed = try? TestSupport.run("/usr/bin/busctl", ["--address=unix:path=\(busDirectory)/system_bus_socket", "call",
                                                                  "org.freedesktop.login1", "/org/freedesktop/login1",
                                                                  "org.freedesktop.login1.Manager", "ListSessions"])
            return listed?.succeeded == true
        }
        guard booted, let initPID else {
            let output = nspawn.standardOutput + nspawn.standardError
            try Test.cancel("the container did not boot, or its logind did not answer, within 60 s: \(output)")
        }
        return try await body(LogindContainer(nspawn: nspawn, initPID: initPID, busDirectory: busDirectory))
    }

    /// `debootstrap` of bookworm with systemd, D-Bus and pam_systemd, and the
    /// child's account, made beside ``root`` and renamed into place whole.
    private static func makeRoot(_ root: String, packages: [String]) async throws {
        guard !FileManager.default.fileExists(atPath: "\(root)/usr/lib/systemd/systemd-logind") else { return }
        let partial = root + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        _ = try await TestSupport.run("/usr/sbin/debootstrap", ["--variant=minbase",
                                                "--include=" + (["systemd", "systemd-sysv", "dbus", "libpam-systemd"] + packages).joined(separator: ","),
                                                "bookworm", partial, "http://deb.debian.org/debian"]).requireSuccess()
        _ = try await TestSupport.run("/usr/sbin/chroot", [partial, "/usr/sbin/useradd", "-u", String(childUID), "-m", "-s", "/bin/sh",
                                           childName]).requireSuccess()
        try FileManager.default.moveItem(atPath: partial, toPath: root)
    }

    /// The container's PID 1: the child of `parent` (nspawn) that is PID 1
    /// of its own pid namespace (nspawn's helper child, which forks it and
    /// exits, is not).
    private static func containerInit(of parent: pid_t) -> pid_t? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == parent,
                  let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") }) else { continue }
            let numbers = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst()
            if numbers.count > 1, numbers.last == "1" { return pid }
        }
        return nil
    }

    /// Runs a command inside the container (`nsenter` into every namespace of its PID 1).
    func run(_ arguments: [String]) async throws -> ProcessResult {
        try await TestSupport.run("/usr/bin/nsenter", ["-t", String(initPID), "-a"] + arguments)
    }

    /// `busctl` on the container's system bus, from the host.
    func busctl(_ arguments: [String]) async throws -> ProcessResult {
        try await TestSupport.run("/usr/bin/busctl", ["--address=\(busAddress)"] + arguments)
    }

    /// A real logind session of the child: a service of the container's
    /// systemd with `PAMName=login` and `User=`, whose PAM stack
    /// (pam_systemd) registers it with logind, as a login does.
    /// - Returns: logind's id of the session, its object path, and its
    ///   leader as the host numbers it.
    /// - Parameter sessionClass: logind's class for it (`XDG_SESSION_CLASS`):
    ///   `user`, as a login at a terminal or a desktop is; nil leaves pam_systemd
    ///   its own choice, `background` for a session a service opens.
    func openSession(sessionClass: String? = nil) async throws -> (id: String, path: String, leader: pid_t) {
        let unit = "fc-session-\(UInt32.random(in: 0..<UInt32.max))"
        // The child's sessions before: the new one is the one not among them.
        let before = Set(childSessions().map(\.id))
        _ = try await run(["/usr/bin/systemd-run", "--unit=\(unit)", "-p", "PAMName=login", "-p", "User=\(Self.childName)"]
                          + (sessionClass.map { ["-E", "XDG_SESSION_CLASS=\($0)"] } ?? []) + ["/bin/sleep", "1000"]).requireSuccess()
        var found: (String, String)?
        _ = await eventually(timeout: .seconds(20)) {
            found = childSessions().first { !before.contains($0.id) }
            return found != nil
        }
        guard let (id, path) = found else { throw FixtureError("logind opened no session for \(Self.childName)") }
        // Acted on once logind has finished opening it (State "opening" while
        // its unit starts), as a session the Guard acts on is.
        let opened = await eventually(timeout: .seconds(20)) {
            let state = try? TestSupport.run("/usr/bin/busctl", ["--address=\(busAddress)", "get-property", "org.freedesktop.login1",
                                                                 path, "org.freedesktop.login1.Session", "State"])
            return state?.standardOutput.hasPrefix("s \"active\"") == true || state?.standardOutput.hasPrefix("s \"online\"") == true
        }
        guard opened else { throw FixtureError("logind's session \(id) did not finish opening") }
        let leaderProperty = try await busctl(["get-property", "org.freedesktop.login1", path, "org.freedesktop.login1.Session",
                                               "Leader"])
        guard let inside = leaderProperty.standardOutput.split(separator: " ").last.flatMap({ pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }),
              let leader = hostPID(of: inside) else {
            throw FixtureError("the session's leader cannot be found: \(leaderProperty.standardOutput)\(leaderProperty.standardError)")
        }
        return (id, path, leader)
    }

    /// The child's sessions logind lists now: id and object path.
    private func childSessions() -> [(id: String, path: String)] {
        guard let listed = try? TestSupport.run("/usr/bin/busctl", ["--address=\(busAddress)", "--json=short", "call",
                                                                    "org.freedesktop.login1", "/org/freedesktop/login1",
                                                                    "org.freedesktop.login1.Manager", "ListSessions"]),
              let object = try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any],
              let sessions = (object["data"] as? [Any])?.first as? [[Any]] else { return [] }
        return sessions.compactMap { session in
            guard session.count == 5, session[2] as? String == Self.childName, let id = session[0] as? String,
                  let path = session[4] as? String else { return nil }
            return (id, path)
        }
    }

    /// The host's pid of the container's process `inside` (`NSpid:` of the
    /// processes in the container's pid namespace).
    func hostPID(of inside: pid_t) -> pid_t? {
        let files = FileManager.default
        guard let namespace = try? files.destinationOfSymbolicLink(atPath: "/proc/\(initPID)/ns/pid"),
              let entries = try? files.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = pid_t(entry), (try? files.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/pid")) == namespace,
                  let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") }) else { continue }
            if line.split(whereSeparator: { $0 == "\t" || $0 == " " }).last.flatMap({ pid_t($0) }) == inside { return pid }
        }
        return nil
    }

    /// Whether logind still has the session `id`.
    func hasSession(_ id: String) async throws -> Bool {
        try await busctl(["call", "org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                          "GetSession", "s", id]).succeeded
    }
}

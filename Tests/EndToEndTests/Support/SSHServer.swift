import Foundation
import TestSupport

/// The SSH side of `familyctl -H`: a key for the teacher (the local user
/// running familyctl), ssh's client configuration, and the wrapper that
/// `FAMILYCTL_SSH` names, all in one temporary folder; ``SSHServer``s share them.
final class SSHKeys: @unchecked Sendable {
    let directory: String
    let teacher: ThrowawayUser
    /// The public half of the teacher's key, for `authorized_keys`.
    let publicKey: String
    /// The host key every server of this test presents, and ssh knows.
    let hostKey: String
    let hostPublicKey: String
    /// The program `FAMILYCTL_SSH` names: `ssh -F` this test's configuration.
    var sshProgram: String { "\(directory)/ssh" }
    var knownHosts: String { "\(directory)/known_hosts" }

    init(teacher: ThrowawayUser) throws {
        self.teacher = teacher
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let key = "\(directory)/id_teacher"
        hostKey = "\(directory)/host_key"
        for path in [key, hostKey] {
            try run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", path]).requireSuccess()
        }
        publicKey = try String(contentsOfFile: "\(key).pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        hostPublicKey = try String(contentsOfFile: "\(hostKey).pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        // ssh refuses a private key anyone else may read.
        chown(key, teacher.uid, teacher.gid)
        chmod(key, 0o600)
        try "".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let configuration = """
            Host *
                IdentityFile \(key)
                IdentitiesOnly yes
                UserKnownHostsFile \(knownHosts)
                GlobalKnownHostsFile /dev/null
                StrictHostKeyChecking yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                ConnectTimeout 5
                LogLevel ERROR

            """
        try configuration.write(toFile: "\(directory)/ssh_config", atomically: true, encoding: .utf8)
        try writeProgram("#!/bin/sh\nexec /usr/bin/ssh -F \(directory)/ssh_config \"$@\"\n", to: sshProgram)
    }

    /// ssh trusts this test's host key on `port` of the loopback address.
    func trust(port: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: knownHosts))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("[127.0.0.1]:\(port) \(hostPublicKey)\n".utf8))
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// A real OpenSSH server on 127.0.0.1, on a free port, with its own
/// configuration: key authentication only (`UsePAM no`: PAM is the Guard's
/// business here, not sshd's) unless `pam` asks for sshd's PAM and password
/// logins, each login user's keys in a file of the test's,
/// and every session given `FAMILYCONTROLS_SOCKET` (the Guard fixture's socket
/// on this "host") and a `PATH` whose `familyctl` is the one just built, as an
/// installed one would be found.
final class SSHServer: @unchecked Sendable {
    let port: Int
    let directory: String
    private let pid: pid_t

    /// - Parameters:
    ///   - logins: the users who may log in, each with the teacher's key.
    ///   - socket: the Guard socket sessions are given; nil gives none.
    ///   - installed: whether sessions find the `familyctl` just built in `PATH`.
    ///   - systemPath: whether `PATH` also holds /usr/bin and /bin; without
    ///     them, a machine without `familyctl` stays one while a package
    ///     another test installs on this machine puts one in /usr/bin.
    ///   - root: whether root may log in too, with the same key (as an
    ///     administrator's configuration management tool does).
    ///   - pam: sshd's own PAM (`UsePAM yes`, the `sshd` service of
    ///     /etc/pam.d), with password and keyboard-interactive logins too.
    ///   - launchPrefix: what sshd runs under (a private mount namespace).
    init(keys: SSHKeys, logins: [ThrowawayUser], socket: String?, installed: Bool = true, systemPath: Bool = true, root: Bool = false,
         pam: Bool = false, launchPrefix: [String] = []) throws {
        directory = try makeTemporaryDirectory()
        chmod(directory, 0o755)
        let bin = "\(directory)/bin"
        try FileManager.default.createDirectory(atPath: "\(directory)/keys", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        chmod(bin, 0o755)
        chmod("\(directory)/keys", 0o755)
        if installed {
            try FileManager.default.createSymbolicLink(atPath: "\(bin)/familyctl", withDestinationPath: productPath("familyctl"))
        }
        let names = logins.map(\.name) + (root ? ["root"] : [])
        for name in names {
            try "\(keys.publicKey)\n".write(toFile: "\(directory)/keys/\(name)", atomically: true, encoding: .utf8)
            chmod("\(directory)/keys/\(name)", 0o644)
        }
        // sshd's privilege separation needs its empty folder.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        port = try freeLoopbackPort()
        var environment = systemPath ? "PATH=\(bin):/usr/bin:/bin" : "PATH=\(bin)"
        if let socket { environment += " FAMILYCONTROLS_SOCKET=\(socket)" }
        let configuration = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(keys.hostKey)
            PidFile none
            UsePAM \(pam ? "yes" : "no")
            PubkeyAuthentication yes
            PasswordAuthentication \(pam ? "yes" : "no")
            KbdInteractiveAuthentication \(pam ? "yes" : "no")
            AuthorizedKeysFile \(directory)/keys/%u
            StrictModes no
            AllowUsers \(names.joined(separator: " "))
            PermitRootLogin \(root ? "prohibit-password" : "no")
            PrintMotd no
            SetEnv \(environment)
            LogLevel VERBOSE

            """
        try configuration.write(toFile: "\(directory)/sshd_config", atomically: true, encoding: .utf8)
        try keys.trust(port: port)
        // Started from a shell and left to it, not as a Foundation Process: Foundation's
        // child monitor blocked in waitpid for a running sshd, hanging the test run.
        let prefix = launchPrefix.map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))' " }.joined()
        let started = try run("/bin/sh", ["-c", "\(prefix)/usr/sbin/sshd -D -e -f '\(directory)/sshd_config' </dev/null "
                                            + ">'\(directory)/sshd.log' 2>&1 & echo $!"]).requireSuccess()
        guard let pid = Int32(started.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw FixtureError("sshd did not start: \(started.standardError)")
        }
        self.pid = pid
        let deadline = Date().addingTimeInterval(10)
        while !isListening(port) {
            guard isRunning, Date() < deadline else {
                throw FixtureError("sshd did not start: \(self.log)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    var logPath: String { "\(directory)/sshd.log" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    private var isRunning: Bool { kill(pid, 0) == 0 }

    /// SIGKILL: sshd inherits the test thread's blocked signals, SIGTERM among them.
    func stop() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        for _ in 0..<100 where isRunning { Thread.sleep(forTimeInterval: 0.02) }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Whether something accepts TCP connections on `port` of 127.0.0.1.
private func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopback(port)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

private func loopback(_ port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// A TCP port of 127.0.0.1 nothing listens on now: the kernel's pick for port 0.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FixtureError("socket failed") }
    defer { close(fd) }
    var address = loopback(0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw FixtureError("bind to 127.0.0.1:0 failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP port of 127.0.0.1 that takes connections and never says a word, as
/// a machine that hangs would: ssh waits there for the server's greeting.
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 16) == 0
            }
        }
        guard bound else { close(fd); throw FixtureError("listen on 127.0.0.1:0 failed") }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

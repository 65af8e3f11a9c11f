import Foundation
import TestSupport

/// The machine's own logins, run in a ``PrivateLoginStack``: `su -` as
/// root, `login -f` on a pseudo-terminal, and ssh to a real sshd by key,
/// password or keyboard-interactive (``SSHLogins``). A login that got
/// through runs ``shellLine``, whose output holds ``marker``.
struct RealLogins {
    /// What a shell prints once the login got through.
    static let marker = "in-42"
    static let shellLine = "echo in-$((6*7)); exit"

    /// Runs a command on a new pseudo-terminal, types the secret read from
    /// standard input when the terminal asks for a password and `line` at
    /// the first shell prompt, and prints what the terminal showed and the
    /// exit status. The secret is never printed (the terminal does not echo it).
    static let terminal = #"""
        import os, pty, select, signal, sys, time
        secret = sys.stdin.readline().rstrip("\n")
        line = sys.argv[1]
        command = sys.argv[2:]
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(command[0], command)
        out = b""; typed_secret = typed_line = False; deadline = time.time() + 20
        while time.time() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    break
                if not data:
                    break
                out += data
            if not typed_secret and secret and out.rstrip().endswith(b"Password:"):
                os.write(fd, secret.encode() + b"\n"); typed_secret = True
            if not typed_line and out.rstrip().endswith((b"$", b"#")):
                os.write(fd, line.encode() + b"\n"); typed_line = True
        try:
            os.kill(pid, signal.SIGKILL) if time.time() >= deadline else None
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
        sys.stdout.write("\n[exit %d]\n" % os.waitstatus_to_exitcode(status))
        """#

    let stack: PrivateLoginStack

    /// `su - USER -c 'echo in-42'` as root: su still runs the account phase.
    func su(_ user: String) async throws -> ProcessResult {
        try await run("/usr/bin/env", ["-u", "TZ"] + stack.namespace(["/usr/bin/su", "-", user, "-s", "/bin/sh", "-c", Self.shellLine]))
    }

    /// `command` on a pseudo-terminal in the private stacks, typing `secret` at a password prompt.
    func onTerminal(_ command: [String], secret: String = "") async throws -> String {
        let script = "\(stack.directory)/terminal.py"
        try Self.terminal.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await run("/usr/bin/python3", [script, Self.shellLine] + stack.namespace(command), input: secret + "\n")
        return result.standardOutput + result.standardError
    }

    /// `su - USER` again until it gets in (`getsIn`) or is refused, for up to
    /// 10 s (a Guard rewrites its login-limits file as limits change); the last try.
    func su(_ user: String, until getsIn: Bool) async throws -> ProcessResult {
        var result = try await su(user)
        for _ in 0..<100 where result.standardOutput.contains(Self.marker) != getsIn {
            try await Task.sleep(for: .milliseconds(100))
            result = try await su(user)
        }
        return result
    }

    /// `login -f USER` on a pseudo-terminal: what the person saw.
    func loginDashF(_ user: String) async throws -> String {
        try await onTerminal(["/usr/bin/login", "-f", user])
    }
}

/// A real sshd on 127.0.0.1 whose PAM stacks are a ``PrivateLoginStack``'s,
/// taking `child`'s password and `adult`'s key (root's too).
struct SSHLogins {
    static let methods = ["publickey", "password", "keyboard-interactive"]
    let keys: SSHKeys
    let server: SSHServer
    private let askpass: String

    init(stack: PrivateLoginStack, child: ThrowawayUser, adult: ThrowawayUser) throws {
        guard let password = child.password else { throw FixtureError("\(child.name) has no password") }
        keys = try SSHKeys(teacher: adult)
        server = try SSHServer(keys: keys, logins: [child, adult], socket: nil, root: true, pam: true,
                               launchPrefix: stack.namespace([]))
        // The password reaches ssh through SSH_ASKPASS, from a file of root's alone.
        let secret = "\(stack.directory)/secret"
        try LoginLimits.write(password + "\n", to: secret)
        askpass = "\(stack.directory)/askpass"
        try writeProgram("#!/bin/sh\nexec cat '\(secret)'\n", to: askpass, mode: 0o700)
    }

    /// `ssh USER@127.0.0.1 'echo in-42'`, authenticating by `method` only.
    func ssh(_ user: String, _ method: String) async throws -> ProcessResult {
        var options = ["-F", "\(keys.directory)/ssh_config", "-p", String(server.port), "-o", "LogLevel=INFO",
                       "-o", "PreferredAuthentications=\(method)", "-o", "NumberOfPasswordPrompts=1"]
        if method != "publickey" {
            options += ["-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=yes",
                        "-o", "KbdInteractiveAuthentication=yes"]
        }
        return try await run("/usr/bin/ssh", options + ["\(user)@127.0.0.1", RealLogins.shellLine],
                             environment: ["SSH_ASKPASS": askpass, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": String?.none])
    }

    func stop() { server.stop() }
}

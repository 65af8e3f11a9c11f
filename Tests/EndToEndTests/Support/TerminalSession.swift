import Foundation
import TestSupport

/// Runs a program on a real pseudo-terminal (Python's `pty`), answering each
/// prompt as it appears, and reports what the terminal looked like: whether
/// echo was on at each prompt and after the program ended.
struct TerminalSession {
    /// What the session showed. Its description leaves out the terminal's text,
    /// which may hold a password when a test fails.
    struct Outcome: Decodable, CustomStringConvertible {
        /// The program's exit status, or -signal when a signal ended it.
        var status: Int
        /// Everything the terminal showed.
        var output: String
        /// Echo at each prompt answered, in order.
        var echoAtPrompts: [Bool]
        /// Echo once the program had ended.
        var echoAfter: Bool

        var description: String { "status \(status), echo at prompts \(echoAtPrompts), echo after \(echoAfter)" }

        /// Whether the terminal showed `text`, as a plain value for expectations.
        func showed(_ text: String) -> Bool { output.contains(text) }
    }

    /// `steps` are (prompt text to wait for, what to type); typing "^C" sends Ctrl-C.
    static func run(_ argv: [String], steps: [(String, String)], environment: [String: String] = [:]) async throws -> Outcome {
        let script = """
            import json, os, pty, select, signal, sys, termios, time
            argv, steps, env = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
            pid, fd = pty.fork()
            if pid == 0:
                # As from a login shell: the test runner's blocked signals must not reach the program.
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                for number in (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP):
                    signal.signal(number, signal.SIG_DFL)
                os.execve(argv[0], argv, env)
            out, echoes, deadline = b"", [], time.time() + 30
            # Only what the terminal showed since the last answer can be the next prompt.
            answered = 0
            while time.time() < deadline:
                if steps and out[answered:].decode(errors="replace").rstrip().endswith(steps[0][0].rstrip()):
                    echoes.append(bool(termios.tcgetattr(fd)[3] & termios.ECHO))
                    typed = steps.pop(0)[1]
                    os.write(fd, b"\\x03" if typed == "^C" else typed.encode() + b"\\n")
                    answered = len(out)
                    continue
                ready, _, _ = select.select([fd], [], [], 0.1)
                if ready:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    out += chunk
            echo_after = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
            _, status = os.waitpid(pid, 0)
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            print(json.dumps({"status": code, "output": out.decode(errors="replace"),
                              "echoAtPrompts": echoes, "echoAfter": echo_after}))
            """
        var env = ["PATH": "/usr/bin:/bin"]
        for (key, value) in environment { env[key] = value }
        func json(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        }
        let result = try await TestSupport.run(pythonPath, ["-c", script, try json(argv), try json(steps.map { [$0.0, $0.1] }), try json(env)])
        guard result.succeeded else { throw FixtureError("pty driver failed: \(result.standardError)") }
        return try JSONDecoder().decode(Outcome.self, from: Data(result.standardOutput.utf8))
    }
}

import Foundation
import TestSupport

/// A program run in a real terminal emulator (tmux, on a socket of its own),
/// its screen captured cell by cell with colours, and a QR code on that
/// screen read back by a real decoder (`zbarimg`) from a picture of the
/// cells as a terminal with a dark, and then a light, default background
/// shows them. Nothing the screen or the decoder holds leaves the driver:
/// it reports only whether the decoded text was the line it was told to
/// compare with.
enum TerminalScreen {
    /// What the driver found.
    struct Outcome: Decodable, CustomStringConvertible {
        /// Whether the screen showed `done` in time.
        var finished: Bool
        /// Per default background ("dark", "light"): whether the QR code decoded to the expected text.
        var decodes: [String: Bool]
        /// Per default background: whether the decoder found any QR code at all.
        var found: [String: Bool]

        var description: String { "finished \(finished), decodes \(decodes), found a code \(found)" }
    }

    /// Whether this machine has what the driver needs.
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg")
    }

    /// Whether this machine can run a program in tmux and capture its screen.
    static var canCapture: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

    /// Runs `argv` in tmux, types `password` at "Password:", waits for
    /// `done`, and decodes the QR code drawn between the lines holding
    /// `after` and `before`; the expected text is the rest of the screen's
    /// line that starts with `expectedPrefix`.
    static func decodeQRCode(_ argv: [String], password: String, done: String, after: String, before: String,
                             expectedPrefix: String) async throws -> Outcome {
        let script = #"""
            import json, os, re, signal, subprocess, sys, tempfile, time
            # The test runner's blocked signals would keep tmux's server from ending at kill-server.
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            argv, password, done, after, before, prefix = json.loads(sys.argv[1])
            folder = tempfile.mkdtemp(prefix="fc-qr.")
            tmux = ["tmux", "-S", folder + "/socket", "-f", "/dev/null"]
            def capture(colours):
                return subprocess.run(tmux + ["capture-pane", "-p", "-t", "qr"] + (["-e"] if colours else []),
                                      capture_output=True, text=True).stdout
            # The pane stays when the program ends, set before it starts: a program that ends
            # at once leaves its last screen, not a session gone before the option is set.
            \#(tmuxStep)
            step("start", ["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                           "new-session", "-d", "-s", "qr", "-x", "200", "-y", "100"] + argv)
            try:
                # Loose: on two cores running the whole suite, enrolling once took over 30 s.
                deadline, typed, finished = time.time() + 90, False, False
                while time.time() < deadline:
                    screen = capture(False)
                    if not typed and "Password:" in screen:
                        step("send-keys (the password)", ["send-keys", "-t", "qr", "-l", "--", password], secret=True)
                        step("send-keys Enter", ["send-keys", "-t", "qr", "Enter"])
                        typed = True
                    if done in screen:
                        finished = True
                        break
                    time.sleep(0.1)
                screen = capture(True)
            finally:
                subprocess.run(tmux + ["kill-server"], capture_output=True)
                subprocess.run(["rm", "-rf", folder])
            expected = None
            for line in re.sub(r"\x1b\[[0-9;]*m", "", screen).split("\n"):
                if line.startswith(prefix):
                    expected = line[len(prefix):].strip()
            # The cells: (character, foreground, background), None for the terminal's default colour.
            rows, fg, bg, bold = [], None, None, False
            for line in screen.split("\n"):
                cells, i = [], 0
                while i < len(line):
                    m = re.match(r"\x1b\[([0-9;]*)m", line[i:])
                    if m:
                        codes = [int(c) if c else 0 for c in m.group(1).split(";")]
                        j = 0
                        while j < len(codes):
                            c = codes[j]
                            if c == 0: fg, bg, bold = None, None, False
                            elif c == 1: bold = True
                            elif c == 22: bold = False
                            elif 30 <= c <= 37: fg = c - 30
                            elif c == 39: fg = None
                            elif 40 <= c <= 47: bg = c - 40
                            elif c == 49: bg = None
                            elif 90 <= c <= 97: fg = c - 90 + 8
                            elif 100 <= c <= 107: bg = c - 100 + 8
                            elif c in (38, 48) and j + 2 < len(codes) and codes[j + 1] == 5:
                                if c == 38: fg = codes[j + 2]
                                else: bg = codes[j + 2]
                                j += 2
                            j += 1
                        i += m.end()
                        continue
                    shown = fg + 8 if bold and fg is not None and fg < 8 else fg
                    cells.append((line[i], shown, bg))
                    i += 1
                rows.append(cells)
            plain = ["".join(c[0] for c in r) for r in rows]
            top = next((i for i, l in enumerate(plain) if after in l), None)
            end = next((i for i, l in enumerate(plain) if before in l), None)
            if top is None or end is None:
                # No code drawn: the outcome says so rather than the driver failing.
                print(json.dumps({"finished": finished, "decodes": {}, "found": {}}))
                sys.exit(0)
            rows = rows[top + 1:end]
            palette = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
                       (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255),
                       (255, 0, 255), (0, 255, 255), (255, 255, 255)]
            themes = {"dark": ((229, 229, 229), (0, 0, 0)), "light": ((0, 0, 0), (255, 255, 255))}
            decodes, found = {}, {}
            for name, (default_fg, default_bg) in themes.items():
                def grey(colour, default):
                    r, g, b = default if colour is None else palette[colour] if colour < 16 else (127, 127, 127)
                    return (r * 299 + g * 587 + b * 114) // 1000
                width = max(len(r) for r in rows) + 8
                scale, margin = 6, 4
                modules = [[grey(None, default_bg)] * width for _ in range(2 * (len(rows) + 2 * margin))]
                for y, cells in enumerate(rows):
                    for x, (char, f, b) in enumerate(cells):
                        halves = {"\u2588": "ff", "\u2580": "fb", "\u2584": "bf"}.get(char, "bb")
                        for half, role in enumerate(halves):
                            value = grey(f, default_fg) if role == "f" else grey(b, default_bg)
                            modules[2 * (y + margin) + half][x + margin] = value
                data = bytearray()
                for row in modules:
                    line = bytearray()
                    for v in row:
                        line += bytes([v]) * scale
                    data += bytes(line) * scale
                with tempfile.NamedTemporaryFile(suffix=".pgm", delete=False) as image:
                    image.write(b"P5 %d %d 255\n" % (width * scale, len(modules) * scale) + bytes(data))
                try:
                    read = subprocess.run(["zbarimg", "--raw", "-q", image.name], capture_output=True, text=True)
                finally:
                    os.unlink(image.name)
                text = read.stdout.strip()
                found[name] = bool(text)
                decodes[name] = expected is not None and text == expected
            print(json.dumps({"finished": finished, "decodes": decodes, "found": found}))
            """#
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: [argv, password, done, after, before,
                                                                                     expectedPrefix]), as: UTF8.self)
        let result = try await TestSupport.run(pythonPath, ["-c", script, arguments])
        guard result.succeeded else {
            throw FixtureError("the terminal driver failed (status \(result.status)): \(errorType(result))")
        }
        return try JSONDecoder().decode(Outcome.self, from: Data(result.standardOutput.utf8))
    }
    /// What a terminal showed at the end: its screen as plain text.
    struct Capture: Decodable, CustomStringConvertible {
        /// Whether the screen showed `done` in time.
        var finished: Bool
        /// Each step's prompt, in order, that was answered.
        var answered: Int
        /// The screen's lines, trailing blanks and blank lines at the end removed.
        var screen: String

        /// Leaves out the screen, which a failing test might otherwise print with what was typed.
        var description: String { "finished \(finished), \(answered) prompt(s) answered" }
    }

    /// The drivers' `step(name, arguments, secret, prefix)`: runs tmux (on
    /// the script's `tmux` command line, in its `folder`) and on failure ends
    /// the driver with a "driver: " line naming the step, with tmux's own
    /// message, never the command, which may type a password; a step typing
    /// a secret leaves tmux's message out too, as it may quote what was
    /// typed. The server's streams go to a file, not a pipe: the server
    /// outlives the call. Text is typed after "--", which ends tmux's
    /// options: a password may begin with "-".
    private static let tmuxStep = #"""
        def step(name, arguments, secret=False, prefix=[]):
            with open(folder + "/tmux.err", "w+") as err:
                ran = subprocess.run(prefix + tmux + arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=err)
                err.seek(0)
                said = " ".join(err.read().split())
            if ran.returncode != 0:
                if secret: said = "(its message is left out: it may quote what was typed)"
                subprocess.run(tmux + ["kill-server"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                subprocess.run(["rm", "-rf", folder])
                sys.exit("driver: tmux %s exited %d: %s" % (name, ran.returncode, said or "(nothing said)"))
        """#

    /// The driver's own "driver: " line (which tmux step failed, with
    /// tmux's message, typed text left out), or else only the type of the
    /// error its traceback ends with: that error's message may hold a
    /// command that typed a password.
    private static func errorType(_ result: ProcessResult) -> String {
        guard let last = result.standardError.split(separator: "\n").last else { return "" }
        if last.hasPrefix("driver: ") { return String(last) }
        return last.split(separator: ":").first.map(String.init) ?? ""
    }

    /// Runs `argv` in tmux (a server of its own, `width` × `height` cells),
    /// answers each of `steps` (the text to wait for at the screen's end,
    /// what to type; nothing is ever echoed back by the driver) in order,
    /// waits for `done`, and returns the screen as plain text
    /// (`capture-pane -p`). `environment` is the program's whole environment.
    static func capture(_ argv: [String], steps: [(String, String)], done: String, environment: [String: String],
                        width: Int = 120, height: Int = 30) async throws -> Capture {
        let script = #"""
            import json, os, signal, subprocess, sys, tempfile, time
            # The test runner's blocked signals would keep tmux's server from ending at kill-server.
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            argv, steps, done, env, width, height = json.loads(sys.argv[1])
            folder = tempfile.mkdtemp(prefix="fc-capture.")
            tmux = ["tmux", "-u", "-S", folder + "/socket", "-f", "/dev/null"]
            quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            def capture():
                # -J: a line the terminal wrapped is one line, as the program wrote it.
                return subprocess.run(tmux + ["capture-pane", "-p", "-J", "-t", "shot"], capture_output=True, text=True,
                                      stdin=subprocess.DEVNULL).stdout
            \#(tmuxStep)
            step("start", ["start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                           "new-session", "-d", "-s", "shot", "-x", str(width), "-y", str(height)] + argv,
                 prefix=["env", "-i"] + ["%s=%s" % kv for kv in env.items()])
            answered, finished = 0, False
            try:
                deadline = time.time() + 90
                while time.time() < deadline:
                    screen = capture().rstrip()
                    if answered < len(steps) and screen.endswith(steps[answered][0].rstrip()):
                        step("send-keys (answer %d)" % (answered + 1), ["send-keys", "-t", "shot", "-l", "--", steps[answered][1]],
                             secret=True)
                        step("send-keys Enter", ["send-keys", "-t", "shot", "Enter"])
                        answered += 1
                        time.sleep(0.2)
                        continue
                    if answered == len(steps) and done in screen:
                        finished = True
                        time.sleep(0.3)
                        break
                    time.sleep(0.1)
                screen = capture()
            finally:
                subprocess.run(tmux + ["kill-server"], **quiet)
                subprocess.run(["rm", "-rf", folder], **quiet)
            lines = [line.rstrip() for line in screen.split("\n")]
            while lines and not lines[-1]:
                lines.pop()
            print(json.dumps({"finished": finished, "answered": answered, "screen": "\n".join(lines)}))
            """#
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: [
            argv, steps.map { [$0.0, $0.1] }, done, environment, width, height,
        ] as [Any]), as: UTF8.self)
        let result = try await TestSupport.run(pythonPath, ["-c", script, arguments])
        guard result.succeeded else { throw FixtureError("the terminal driver failed (status \(result.status)): \(errorType(result))") }
        return try JSONDecoder().decode(Capture.self, from: Data(result.standardOutput.utf8))
    }
}

import Foundation
import Testing
import TestSupport

/// The four ways a child captured a guardian's password, each as a real
/// child process: a traced app, a preloaded library that hides itself, a
/// fake Guard behind `FAMILYCONTROLS_SOCKET`, the child's own askpass. In
/// each the guardian does what the system asks of them (types into the app
/// where the app asks, or approves from their own session where it says so),
/// and the child must end up with nothing.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct SecretCaptureTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace (.ci/run installs it)"))
    func aChildTracingTheGenuineAppSeesNoSecret() async throws {
        try await withGuard { guardd in
            let home = try guardd.makeChildHome()
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            guard await app.waitForError(containing: "Allow “") else { throw FixtureError("no alert: \(app.standardError)") }
            // Attached after the alert, as the review did: the Guard checked for a tracer when the app connected.
            let tracer = Process()
            tracer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            tracer.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                "/usr/bin/strace", "-f", "-p", String(app.process.processIdentifier), "-s", "65536",
                                "-e", "trace=read,recvfrom,recvmsg,readv", "-o", "\(home)/trace.txt"]
            try tracer.run()
            defer { kill(tracer) }
            #expect(await eventually { FileManager.default.fileExists(atPath: "\(home)/trace.txt") })
            try await Task.sleep(for: .milliseconds(300))
            app.write("continue\n")
            try await guardd.guardianDoesAsAsked(app)
            _ = await app.exitStatus()
            kill(tracer)
            let trace = (try? String(contentsOfFile: "\(home)/trace.txt", encoding: .utf8)) ?? ""
            #expect(trace.contains("read("), "the trace caught nothing at all: is strace working?")
            // What every traced read returned, joined: a line may come a byte at a time.
            let read = trace.matches(of: /(?:read|recvfrom|recvmsg|readv)\(\d+, [^"]*"((?:[^"\\]|\\.)*)"/).map { String($0.1) }.joined()
            #expect(!read.contains(guardd.guardian.password ?? "-"), "the child's trace holds the guardian's password")
        }
    }

    @Test(.enabled(if: canCompileC, "needs gcc to build the child's library"))
    func aPreloadedLibraryThatHidesItselfRecordsNoSecret() async throws {
        try await withGuard { guardd in
            let home = try guardd.makeChildHome()
            // Hides LD_PRELOAD= from /proc/PID/environ and copies everything read into a file.
            try """
                #define _GNU_SOURCE
                #include <dlfcn.h>
                #include <fcntl.h>
                #include <string.h>
                #include <sys/socket.h>
                #include <unistd.h>
                extern char **environ;
                static int out = -1;
                __attribute__((constructor)) static void start(void) {
                    for (char **e = environ; *e; e++)
                        if (strncmp(*e, "LD_PRELOAD=", 11) == 0) memset(*e, 'X', 10);
                    out = open("\(home)/captured.txt", O_WRONLY | O_CREAT | O_APPEND, 0600);
                }
                static void keep(const void *data, ssize_t n) { if (out >= 0 && n > 0) write(out, data, n); }
                ssize_t read(int fd, void *buf, size_t count) {
                    static ssize_t (*real)(int, void *, size_t);
                    if (!real) real = dlsym(RTLD_NEXT, "read");
                    ssize_t n = real(fd, buf, count); keep(buf, n); return n;
                }
                ssize_t recv(int fd, void *buf, size_t len, int flags) {
                    static ssize_t (*real)(int, void *, size_t, int);
                    if (!real) real = dlsym(RTLD_NEXT, "recv");
                    ssize_t n = real(fd, buf, len, flags); keep(buf, n); return n;
                }
                """.write(toFile: "\(home)/capture.c", atomically: true, encoding: .utf8)
            try await sh("gcc -shared -fPIC -o '\(home)/capture.so' '\(home)/capture.c' -ldl && chown -R \(guardd.child.name) '\(home)'")
                .requireSuccess()
            let app = try RunningApp(arguments: guardd.commandLine(
                as: guardd.child, executable: guardd.appExecutable, ["request", "--member", "child", "--stdin"],
                environment: ["LD_PRELOAD": "\(home)/capture.so"]))
            defer { app.stop() }
            try await app.answerTheAlert()
            try await guardd.guardianDoesAsAsked(app)
            _ = await app.exitStatus()
            let captured = (try? String(contentsOfFile: "\(home)/captured.txt", encoding: .utf8)) ?? ""
            #expect(!captured.contains(guardd.guardian.password ?? "-"), "the child's library captured the guardian's password")
            #expect(try await guardd.storedStatus() == "notDetermined", "an app running the child's library was approved")
        }
    }

    @Test func aFakeGuardBehindTheSocketVariableIsToldNothing() async throws {
        try await withGuard { guardd in
            let home = try guardd.makeChildHome()
            // Speaks like the Guard: the alert, then asks for the guardian's name and password, and keeps what it gets.
            let fake = """
                import json, os, socket, sys
                path, log = sys.argv[1], sys.argv[2]
                server = socket.socket(socket.AF_UNIX); server.bind(path); os.chmod(path, 0o666); server.listen(1)
                open(log + '.ready', 'w').close()
                conn, _ = server.accept()
                def send(p, more=True): conn.sendall(json.dumps({'parameters': p, 'continues': more}).encode() + b'\\0')
                buffer = b''
                prompts = [('alert', 'Allow “FamilyControls Demo” to provide parental controls?'),
                           ('guardian', "Parent or guardian's user name: "), ('secret', 'Password: ')]
                first = True
                while True:
                    chunk = conn.recv(65536)
                    if not chunk: break
                    with open(log, 'ab') as f: f.write(chunk)
                    buffer += chunk
                    *frames, buffer = buffer.split(b'\\0')
                    for frame in frames:
                        if (first or b'Answer' in frame) and prompts:
                            kind, message = prompts.pop(0)
                            send({'prompt': {'id': 3 - len(prompts), 'kind': kind, 'message': message}})
                            first = False
                        elif not prompts:
                            send({'status': 'approved'}, more=False)
                """
            try fake.write(toFile: "\(home)/fake.py", atomically: true, encoding: .utf8)
            try await sh("chown -R \(guardd.child.name) '\(home)'").requireSuccess()
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            server.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                try #require(ScriptedApp.interpreter), "\(home)/fake.py", "\(home)/fake.sock", "\(home)/heard.txt"]
            try server.run()
            defer { kill(server) }
            #expect(await eventually { FileManager.default.fileExists(atPath: "\(home)/heard.txt.ready") })

            let app = try RunningApp(arguments: guardd.commandLine(
                as: guardd.child, executable: guardd.appExecutable, ["request", "--member", "child", "--stdin"],
                environment: ["FAMILYCONTROLS_SOCKET": "\(home)/fake.sock"]))
            defer { app.stop() }
            try await app.answerTheAlert()
            try await guardd.guardianDoesAsAsked(app)
            _ = await app.exitStatus()
            let heard = (try? String(contentsOfFile: "\(home)/heard.txt", encoding: .utf8)) ?? ""
            #expect(!heard.contains(guardd.guardian.password ?? "-"), "the fake Guard was given the guardian's password")
            #expect(heard.isEmpty, "the app sent a service not run by root anything at all: \(heard)")
            #expect(app.standardError.contains("not as root: it is not the Guard"), "\(app.standardError)")
        }
    }

    @Test func theChildsOwnAskpassProgramIsNeverShownAGuardiansPrompt() async throws {
        // With in-person approval on, where a guardian does type into the app.
        try await withGuard(extraConfiguration: "InSessionApproval=yes") { guardd in
            let home = try guardd.makeChildHome()
            // A dialog of the child's: whatever a guardian types into it, it keeps.
            try """
                #!/bin/sh
                echo "$FAMILYCONTROLS_PROMPT_KIND $1" >> '\(home)/askpass.log'
                case "$FAMILYCONTROLS_PROMPT_KIND" in
                    alert) echo continue ;;
                    guardian) echo '\(guardd.guardian.name)' ;;
                    secret) echo '\(guardd.guardian.password ?? "")' ;;
                esac
                """.write(toFile: "\(home)/askpass", atomically: true, encoding: .utf8)
            try await sh("chmod 755 '\(home)/askpass' && chown -R \(guardd.child.name) '\(home)'").requireSuccess()
            // No terminal and no --stdin: the askpass would be the app's only way to ask.
            let result = try await run("/usr/bin/setsid", ["-w"] + guardd.commandLine(
                as: guardd.child, executable: guardd.appExecutable, ["request", "--member", "child"],
                environment: ["FAMILYCONTROLS_ASKPASS": "\(home)/askpass"]), input: "")
            #expect(!FileManager.default.fileExists(atPath: "\(home)/askpass.log"),
                    "the child's askpass program was run for a child's request")
            #expect(result.standardOutput != "status: approved\n")
            #expect(try await guardd.storedStatus() == "notDetermined")
        }
    }
}

extension RunningApp {
    /// Answers the alert with "continue" if the app shows one before it ends.
    func answerTheAlert() async throws {
        _ = await eventually { standardError.contains("Allow “") || !process.isRunning }
        if standardError.contains("Allow “") { write("continue\n") }
    }
}

extension GuardFixture {
    /// A home folder of the child's, for its tools and what they capture.
    func makeChildHome() throws -> String {
        let home = "\(homesRoot)/\(child.name)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        chmod(homesRoot, 0o755)
        chown(home, child.uid, child.gid)
        return home
    }

    /// The guardian does what the app's request asks of them: types their
    /// name and password into the app where the app asks for them, or
    /// approves from their own session (`familyctl approve ID`) where it says
    /// the request waits for them. Returns once they have, or once the app
    /// has ended without asking.
    func guardianDoesAsAsked(_ app: RunningApp) async throws {
        for _ in 0..<300 {
            if let match = app.standardError.firstMatch(of: /familyctl approve (\d+)/) {
                _ = try await familyctlAsGuardian(["approve", String(match.1), "--stdin"], input: "\(guardian.password ?? "")\n")
                return
            }
            if app.standardError.contains("Parent or guardian's user name") {
                app.write("\(guardian.name)\n\(guardian.password ?? "")\n")
                return
            }
            if !app.process.isRunning { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

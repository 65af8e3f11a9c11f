import Foundation
import Testing
import TestSupport

/// Which Flatpak installations the Guard recognises: the child's own and
/// the system one by default, each of which a site can turn off, and further
/// root-owned ones it lists. A system-installed app needs no lock.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"))
struct FlatpakInstallationTests {
    let appID = FlatpakChild.appID

    @Test func anAppOfAPerUserInstallationTurnedOffIsRefusedNamingTheKey() async throws {
        try await withGuardedFlatpakChild(extraConfiguration: "[Flatpak]\nUserInstallations=no\n") { guardd, child in
            let result = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket)
            #expect(result.status != 0)
            #expect(result.standardOutput == "status: notDetermined\n")
            #expect(result.standardError.contains("familycontrols.conf turns off ([Flatpak] UserInstallations=no)"),
                    "\(result.standardError)")
            #expect(guardd.log.contains("([Flatpak] UserInstallations=no)"))
            #expect(try await guardd.authorization(user: child.user.name, appID: appID) == nil)
        }
    }

    @Test func aSandboxedAppWithoutTheSocketGrantIsUnavailableAtOnce() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            let started = Date()
            let result = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket,
                                                 shareSocket: false)
            let elapsed = Date().timeIntervalSince(started)
            #expect(result.status != 0)
            #expect(result.standardError.contains("unavailable"), "\(result.standardError)")
            #expect(result.standardError.contains("--filesystem=/run/familycontrols:ro"), "\(result.standardError)")
            // flatpak run itself takes about a second here; no connection timeout, no hang.
            #expect(elapsed < 30, "took \(elapsed) s")
            #expect(!guardd.log.contains("request: \(appID)"))
        }
    }

    @Test func aSystemInstalledAppIsApprovedWithoutItsFilesBeingTouched() async throws {
        // A system installation of the test's own (flatpak's FLATPAK_SYSTEM_DIR),
        // listed as the site's extra root-owned installation: the machine's is never changed.
        let system = try makeTemporaryDirectory()
        chmod(system, 0o755)
        defer { try? FileManager.default.removeItem(atPath: system) }
        let configuration = "[Flatpak]\nInstallations=\(system)\n"
        try await withGuardedFlatpakChild(installed: false, extraConfiguration: configuration) { guardd, child in
            let bus = child.environment.first { $0.hasPrefix("DBUS_SYSTEM_BUS_ADDRESS=") } ?? ""
            let root = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", "FLATPAK_SYSTEM_DIR=\(system)", bus,
                        "/usr/bin/flatpak"]
            try await run(root[0], Array(root.dropFirst()) + ["remote-add", "--system", "--no-gpg-verify",
                                                            FlatpakChild.remote, child.repository.repository]).requireSuccess()
            try await run(root[0], Array(root.dropFirst()) + ["install", "--system", "-y", "--noninteractive",
                                                            FlatpakChild.remote, appID]).requireSuccess()
            let commit = try child.repository.commit()
            let folder = "\(system)/app/\(appID)"
            let before = try await run("/usr/bin/find", [system, "-printf", "%C@ %m %U %p\\n"]).requireSuccess().standardOutput

            let approved = try await guardd.flatpakRequestApproved(child, flatpakEnvironment: ["FLATPAK_SYSTEM_DIR=\(system)"])
            #expect(approved.standardOutput == "status: approved\n", "\(approved.standardError)\n\(guardd.log)")
            let row = try #require(try await guardd.statusJSON(user: child.user.name, appID: appID))
            let flatpak = try #require(row["flatpak"] as? [String: Any])
            #expect(flatpak["installation"] as? String == "system")
            #expect(flatpak["deployment"] as? String == "\(folder)/\(FlatpakTestRepository.architecture)/\(FlatpakTestRepository.branch)/\(commit)")
            #expect(row["lock"] as? String == "notNeeded")

            // Not one file changed, not even its inode's change time (chattr would set it).
            let after = try await run("/usr/bin/find", [system, "-printf", "%C@ %m %U %p\\n"]).requireSuccess().standardOutput
            #expect(after == before)
            let immutable = try TreeSnapshot.take(folder).items.filter(\.isImmutable)
            #expect(immutable.isEmpty)
            // The check of every lock finds nothing to lock, and changes nothing.
            let verified = try await guardd.familyctl(["locks", "verify"])
            #expect(verified.status == 0, "\(verified.standardOutput)\(verified.standardError)")
            let again = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: guardd.socket,
                                                flatpakEnvironment: ["FLATPAK_SYSTEM_DIR=\(system)"])
            #expect(again.standardOutput == "status: approved\n", "\(again.standardError)")
            let afterVerify = try await run("/usr/bin/find", [system, "-printf", "%C@ %m %U %p\\n"]).requireSuccess().standardOutput
            #expect(afterVerify == before)
        }
    }
}

/// The library inside a sandbox, where root is not mapped and the Guard
/// shows as the overflow uid: a server there may be the Guard or a child's
/// fake, so it is asked nothing secret.
@Suite(.serialized, .enabled(if: canRunFlatpak && canRunGuard, "needs root, useradd, Debian's flatpak and dbus, and the built products"))
struct FlatpakLibraryPeerTests {
    /// A fake Guard: records every byte it receives, and answers a request
    /// with a prompt for a secret.
    static let fakeGuard = #"""
        import os, socket, sys
        path, record = sys.argv[1], sys.argv[2]
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o777)
        server.listen(8)
        open(path + ".ready", "w").close()
        while True:
            connection, _ = server.accept()
            connection.settimeout(20)
            try:
                received = b""
                while b"\0" not in received:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    received += chunk
                with open(record, "ab") as out:
                    out.write(received)
                connection.sendall(b'{"parameters":{"prompt":{"id":1,"kind":"secret","message":"Password:"}},"continues":true}\0')
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    with open(record, "ab") as out:
                        out.write(chunk)
            except Exception:
                pass
            connection.close()
        """#

    @Test func aFakeGuardOfAnotherUidNeverReceivesASecretFromASandboxedApp() async throws {
        try await withGuardedFlatpakChild { guardd, child in
            // The fake runs as another uid (a stand-in for one of the child's
            // subordinate uids): from inside the sandbox it shows as 65534, as the Guard does.
            let other = guardd.adult
            let folder = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            chmod(folder, 0o755)
            chown(folder, other.uid, other.gid)
            let socket = "\(folder)/fake.socket", record = "\(folder)/received"
            let script = "\(folder)/fake.py"
            try Self.fakeGuard.write(toFile: script, atomically: true, encoding: .utf8)
            let fake = Process()
            fake.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            fake.arguments = ["--reuid=\(other.uid)", "--regid=\(other.gid)", "--clear-groups", "/usr/bin/python3",
                              script, socket, record]
            try fake.run()
            defer {
                kill(fake.processIdentifier, SIGKILL)
                fake.waitUntilExit()
            }
            #expect(await eventually { FileManager.default.fileExists(atPath: socket + ".ready") })

            let secret = "Fake-Guard-Must-Not-See-\(UInt32.random(in: 1..<UInt32.max))"
            let result = try await child.runDemo(["request", "--member", "child", "--stdin"], socket: socket,
                                                 input: "continue\n\(guardd.guardian.name)\n\(secret)\n")
            #expect(result.status != 0)
            #expect(result.standardError.contains("authenticationMethodUnavailable"), "\(result.standardError)")
            #expect(result.standardError.contains("nothing secret is typed here"), "\(result.standardError)")
            let received = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            // The fake was reached and asked (so the library took it for a possible Guard), and heard no secret.
            #expect(received.contains("org.familycontrols.guard.RequestAuthorization"), "\(received)")
            #expect(!received.contains(secret))
            #expect(!result.standardOutput.contains(secret) && !result.standardError.contains(secret))
        }
    }
}

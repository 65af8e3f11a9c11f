import Foundation
import Testing
import TestSupport

/// `familyctl -H [USER@]HOST[:PORT]`: a teacher decides for another machine
/// over SSH. A real OpenSSH server on the loopback address stands for the
/// machine, with key authentication; the `familyctl --stdio-bridge` it runs
/// (the one just built, found in the session's `PATH` as an installed one
/// would be) relays to the real Guard there, which authenticates the SSH
/// login's user through real PAM, the password typed on the teacher's own
/// pseudo-terminal.
@Suite(.serialized, .enabled(if: canRunGuard && FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd"),
                             "needs root, useradd, openssh-server and `swift build` products"))
struct RemoteHostTests {
    /// `familyctl ARGUMENTS` run as `user`, with `FAMILYCTL_SSH` set to this test's ssh.
    private func familyctl(_ arguments: [String], as user: ThrowawayUser, keys: SSHKeys,
                           input: String = "") async throws -> ProcessResult {
        try await run("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups",
                                           productPath("familyctl")] + arguments,
                      input: input, environment: ["FAMILYCTL_SSH": keys.sshProgram, "FAMILYCONTROLS_SOCKET": nil])
    }

    @Test func aTeacherApprovesARequestOnAnotherMachineWithThePasswordTypedOnTheirOwnTerminal() async throws {
        try await withGuard { guardd in
            let keys = try SSHKeys(teacher: guardd.guardian)
            let server = try SSHServer(keys: keys, logins: [guardd.guardian], socket: guardd.socket)
            defer { server.stop() }
            let app = try guardd.startApp(executable: guardd.appExecutable)
            defer { app.stop() }
            let id = try await app.waitForPendingRequest()

            let password = guardd.guardian.password ?? ""
            let host = "\(guardd.guardian.name)@127.0.0.1:\(server.port)"
            let terminal = try await TerminalSession.run(
                ["/usr/bin/setpriv", "--reuid=\(guardd.guardian.uid)", "--regid=\(guardd.guardian.gid)", "--clear-groups",
                 productPath("familyctl"), "-H", host, "approve", String(id)],
                steps: [("Password:", password)], environment: ["FAMILYCTL_SSH": keys.sshProgram])
            let shown = terminal.output.replacingOccurrences(of: password, with: "<password>")
            #expect(terminal.status == 0, "\(terminal): \(shown)")
            #expect(terminal.echoAtPrompts == [false], "the password was echoed")
            #expect(terminal.showed("request \(id): “FamilyControls Demo” is approved for \(guardd.child.name); its folder is locked, "
                                    + "so \(guardd.child.name) cannot remove or change it"),
                    "\(shown)")

            #expect(await app.exitStatus() == 0, "\(app.standardError)")
            #expect(app.standardOutput == "status: approved\n")
            #expect(try TreeSnapshot.take(guardd.appDirectory).unlockedItems().isEmpty)
            let audit = try await guardd.auditRows()
            #expect(audit.contains("\(guardd.guardian.name) approve \(guardd.child.name) \(GuardFixture.appID) approved"),
                    "\(audit)")
            for (what, text) in [("terminal", terminal.output), ("Guard's log", guardd.log), ("sshd's log", server.log),
                                 ("app", app.standardOutput + app.standardError)] {
                #expect(!text.contains(password), "the password reached the \(what)")
            }
        }
    }

    @Test func watchingTwoMachinesNamesEachOnesRequestsAndOnesOutOfReachHoldNeitherUp() async throws {
        try await withGuard { first in
            try await withGuard { second in
                let keys = try SSHKeys(teacher: first.guardian)
                let lab1 = try SSHServer(keys: keys, logins: [first.guardian], socket: first.socket)
                defer { lab1.stop() }
                let lab2 = try SSHServer(keys: keys, logins: [second.guardian], socket: second.socket)
                defer { lab2.stop() }
                // One machine hangs (it takes the connection and never answers), one refuses.
                let hanging = try SilentListener()
                let refusing = try freeLoopbackPort()
                let host1 = "\(first.guardian.name)@127.0.0.1:\(lab1.port)"
                let host2 = "\(second.guardian.name)@127.0.0.1:\(lab2.port)"
                let hung = "\(first.guardian.name)@127.0.0.1:\(hanging.port)"
                let down = "\(first.guardian.name)@127.0.0.1:\(refusing)"

                let watcher = Process()
                watcher.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                watcher.arguments = ["--reuid=\(first.guardian.uid)", "--regid=\(first.guardian.gid)", "--clear-groups",
                                     productPath("familyctl"), "-H", [hung, down, host1, host2].joined(separator: ","),
                                     "requests", "--watch"]
                watcher.environment = ["PATH": "/usr/bin:/bin", "FAMILYCTL_SSH": keys.sshProgram]
                let output = Pipe(), errors = Pipe()
                watcher.standardOutput = output
                watcher.standardError = errors
                watcher.standardInput = FileHandle.nullDevice
                try watcher.run()
                defer { kill(watcher) }
                let lines = LineCollector(output.fileHandleForReading)
                let complaints = LineCollector(errors.fileHandleForReading)

                for host in [host1, host2] {
                    #expect(await eventually { lines.all.contains("\(host): No requests are waiting for you.") },
                            "\(lines.all) \(complaints.all)")
                }
                let app1 = try first.startApp(executable: first.appExecutable)
                defer { app1.stop() }
                let app2 = try second.startApp(executable: second.appExecutable)
                defer { app2.stop() }
                let id1 = try await app1.waitForPendingRequest()
                let id2 = try await app2.waitForPendingRequest()
                for (host, id, guardd) in [(host1, id1, first), (host2, id2, second)] {
                    let wanted = "\(host): new request \(id): “FamilyControls Demo” (\(GuardFixture.appID)) asks to provide "
                        + "parental controls for \(guardd.child.name)"
                    #expect(await eventually { lines.all.contains { $0.hasPrefix(wanted) } }, "\(lines.all)")
                    #expect(lines.all.contains { $0.hasPrefix(wanted) && $0.hasSuffix("familyctl -H \(host) approve \(id)   or: familyctl -H \(host) deny \(id)") })
                }
                // Tried again meanwhile (after 1 s, 2 s, …), named once.
                #expect(await eventually { complaints.all.contains { $0.hasPrefix("familyctl: cannot reach \(down) over SSH") } },
                        "\(complaints.all)")
                try await Task.sleep(for: .seconds(4))
                #expect(complaints.all.filter { $0.contains(down) }.count == 1, "\(complaints.all)")
                #expect(!lines.all.contains { $0.hasPrefix("\(hung):") || $0.hasPrefix("\(down):") })
                #expect(watcher.isRunning)

                // Without --watch: each machine's list, and the one out of reach named.
                let listed = try await familyctl(["-H", [host1, down, host2].joined(separator: ","), "requests"],
                                                 as: first.guardian, keys: keys)
                #expect(listed.status == 6, "\(listed.standardError)")
                #expect(listed.standardOutput.contains("\(host1): \(id1)"), "\(listed.standardOutput)")
                #expect(listed.standardOutput.contains("\(host2): \(id2)"), "\(listed.standardOutput)")
                #expect(listed.standardError.hasPrefix("familyctl: cannot reach \(down) over SSH"), "\(listed.standardError)")
            }
        }
    }

    @Test func statusAndLogFromAHostsFileNameEachRowsMachineAndAMachineOutOfReachIsNamedOnceWithoutHoldingUpTheOthers() async throws {
        try await withGuard { first in
            try await withGuard { second in
                // Each machine's child has the demo approved by that machine's guardian.
                for guardd in [first, second] {
                    let approved = try await guardd.requestApproved()
                    #expect(approved.status == 0, "\(approved.standardError)")
                }
                let keys = try SSHKeys(teacher: first.guardian)
                let lab1 = try SSHServer(keys: keys, logins: [first.guardian], socket: first.socket)
                defer { lab1.stop() }
                let lab2 = try SSHServer(keys: keys, logins: [second.guardian], socket: second.socket)
                defer { lab2.stop() }
                let host1 = "\(first.guardian.name)@127.0.0.1:\(lab1.port)"
                let host2 = "\(second.guardian.name)@127.0.0.1:\(lab2.port)"
                let down = "\(first.guardian.name)@127.0.0.1:\(try freeLoopbackPort())"
                let hostsFile = "\(keys.directory)/room7.hosts"
                try "# room 7\n\(host1)   # front row\n\n\(down)\n\(host2)\n\(host1)\n"
                    .write(toFile: hostsFile, atomically: true, encoding: .utf8)
                chmod(hostsFile, 0o644)
                let children = [host1: first.child.name, host2: second.child.name]

                for (verb, key) in [("status", "authorizations"), ("log", "events")] {
                    let result = try await familyctl(["-H", "@\(hostsFile)", verb, "--json"], as: first.guardian, keys: keys)
                    #expect(result.status == 6, "\(verb): \(result.standardError)")
                    let complaints = result.standardError.split(separator: "\n")
                    #expect(complaints.filter { $0.contains(down) }.count == 1, "\(verb): \(result.standardError)")
                    #expect(complaints.first?.hasPrefix("familyctl: cannot reach \(down) over SSH") == true, "\(result.standardError)")
                    #expect(complaints.dropFirst() == ["familyctl: not every machine answered"], "\(result.standardError)")
                    let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
                    let rows = document?[key] as? [[String: Any]] ?? []
                    // Every row names its machine; each machine's rows are its own child's, in the order the file names them.
                    let hosts = rows.map { $0["host"] as? String ?? "(none)" }
                    #expect(Set(hosts) == [host1, host2], "\(verb): \(result.standardOutput)")
                    let second = hosts.firstIndex(of: host2) ?? hosts.count
                    #expect(hosts[..<second].allSatisfy { $0 == host1 } && hosts[second...].allSatisfy { $0 == host2 },
                            "\(verb): \(hosts)")
                    for row in rows {
                        let host = row["host"] as? String ?? ""
                        #expect(row["user"] as? String == children[host], "\(verb): \(row)")
                        #expect(row["app"] as? String == GuardFixture.appID, "\(verb): \(row)")
                    }
                    if verb == "status" {
                        #expect(rows.count == 2 && rows.allSatisfy { $0["status"] as? String == "approved" }, "\(rows)")
                    } else {
                        for host in [host1, host2] {
                            #expect(rows.contains { $0["host"] as? String == host && $0["action"] as? String == "approve" }, "\(rows)")
                        }
                    }
                }

                // Plain: each line after its machine's name.
                let plain = try await familyctl(["-H", "@\(hostsFile)", "status"], as: first.guardian, keys: keys)
                #expect(plain.status == 6, "\(plain.standardError)")
                let lines = plain.standardOutput.split(separator: "\n").map(String.init)
                for (host, child) in children {
                    #expect(lines.contains { $0.hasPrefix("\(host): \(child) ") && $0.contains(GuardFixture.appID) }, "\(lines)")
                }
                #expect(lines.allSatisfy { $0.hasPrefix("\(host1): ") || $0.hasPrefix("\(host2): ") }, "\(lines)")
                let monitors = try await familyctl(["-H", "@\(hostsFile)", "monitors"], as: first.guardian, keys: keys)
                #expect(monitors.status == 6, "\(monitors.standardError)")
                #expect(monitors.standardOutput == "\(host1): No monitors are running that you may see.\n"
                    + "\(host2): No monitors are running that you may see.\n", "\(monitors.standardOutput)")
                // requests too: a request waiting on the second machine (its approval revoked first), none on the first.
                try await second.familyctl(["revoke", "--user", second.child.name, "--app", GuardFixture.appID]).requireSuccess()
                let waiting = try second.startApp(executable: second.appExecutable)
                defer { waiting.stop() }
                let id = try await waiting.waitForPendingRequest()
                let requests = try await familyctl(["-H", "@\(hostsFile)", "requests"], as: first.guardian, keys: keys)
                #expect(requests.status == 6, "\(requests.standardError)")
                #expect(requests.standardError.split(separator: "\n").filter { $0.contains(down) }.count == 1, "\(requests.standardError)")
                let listed = requests.standardOutput.split(separator: "\n").map(String.init)
                #expect(listed.contains("\(host1): No requests are waiting for you."), "\(requests.standardOutput)")
                #expect(listed.contains { $0.hasPrefix("\(host2): \(id) ") && $0.contains(second.child.name) }, "\(requests.standardOutput)")
                #expect(listed.allSatisfy { $0.hasPrefix("\(host1): ") || $0.hasPrefix("\(host2): ") }, "\(listed)")

                // Deciding stays one machine at a time; a line that names no machine is refused by its number.
                let decided = try await familyctl(["-H", "@\(hostsFile)", "revoke", "--user", first.child.name,
                                                   "--app", GuardFixture.appID], as: first.guardian, keys: keys)
                #expect(decided.status == 2, "\(decided.standardError)")
                #expect(decided.standardError.hasPrefix("familyctl: revoke works on one machine at a time, but -H names 3"),
                        "\(decided.standardError)")
                #expect(try await first.storedStatus() == "approved")
                try "\(host1)\n\(host2) lab3\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
                chmod(hostsFile, 0o644)
                let malformed = try await familyctl(["-H", "@\(hostsFile)", "status"], as: first.guardian, keys: keys)
                #expect(malformed.status == 2)
                #expect(malformed.standardError.hasPrefix("familyctl: -H @\(hostsFile), line 2: \"\(host2) lab3\": "),
                        "\(malformed.standardError)")
                #expect(malformed.standardOutput.isEmpty)
            }
        }
    }

    @Test func theBridgeRefusesAServiceOnTheMachineThatIsNotRootAndSendsItNothing() async throws {
        let teacher = try await offload { try makeThrowawayUser(prefix: "t", password: true) }
        let faker = try await offload { try makeThrowawayUser(prefix: "f", password: false) }
        defer { removeThrowawayUser(teacher); removeThrowawayUser(faker) }
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o755)
        chown(directory, faker.uid, faker.gid)
        let socket = "\(directory)/fake.socket", heard = "\(directory)/heard"
        // A user of the machine listens where the session's FAMILYCONTROLS_SOCKET points, recording what arrives.
        let script = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(8)
            open(sys.argv[2], "w").close()
            while True:
                c, _ = s.accept(); c.settimeout(3)
                try:
                    data = c.recv(65536)
                except OSError:
                    data = b""
                with open(sys.argv[2], "ab") as f: f.write(data)
                c.close()
            """
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        fake.arguments = ["--reuid=\(faker.uid)", "--regid=\(faker.gid)", "--clear-groups", "/usr/bin/python3", "-c", script, socket, heard]
        try fake.run()
        defer { kill(fake) }
        #expect(await eventually { FileManager.default.fileExists(atPath: heard) })

        let keys = try SSHKeys(teacher: teacher)
        let server = try SSHServer(keys: keys, logins: [teacher], socket: socket)
        defer { server.stop() }
        let host = "\(teacher.name)@127.0.0.1:\(server.port)"
        let password = teacher.password ?? ""
        let refused = try await familyctl(["-H", host, "approve", "1", "--stdin"], as: teacher, keys: keys, input: "\(password)\n")
        #expect(refused.status == 5, "\(refused.standardError)")
        #expect(refused.standardError == "familyctl: the Guard on \(host) could not be reached: the service at \(socket) "
            + "runs as uid \(faker.uid), not as root: it is not the Guard, so nothing was sent to it\n")
        try await Task.sleep(for: .seconds(1))
        let received = try Data(contentsOf: URL(fileURLWithPath: heard))
        #expect(received.isEmpty, "the fake service received \(received.count) bytes")
        #expect(!(refused.standardOutput + refused.standardError + server.log).contains(password))
    }

    @Test func eachWayOfNotReachingTheGuardIsOneLineNamingTheMachineWithItsOwnStatus() async throws {
        let teacher = try await offload { try makeThrowawayUser(prefix: "t", password: true) }
        defer { removeThrowawayUser(teacher) }
        let keys = try SSHKeys(teacher: teacher)
        let nothing = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: nothing) }
        chmod(nothing, 0o755)
        let noGuard = try SSHServer(keys: keys, logins: [teacher], socket: "\(nothing)/guard.socket")
        defer { noGuard.stop() }
        let notInstalled = try SSHServer(keys: keys, logins: [teacher], socket: "\(nothing)/guard.socket", installed: false,
                                         systemPath: false)
        defer { notInstalled.stop() }
        let closed = try freeLoopbackPort()
        let cases: [(port: Int, status: Int32, message: String)] = [
            (closed, 6, "cannot reach \(teacher.name)@127.0.0.1:\(closed) over SSH: connect to host 127.0.0.1 port \(closed): Connection refused"),
            (notInstalled.port, 7, "\(teacher.name)@127.0.0.1:\(notInstalled.port) has no familyctl to reach its Guard through (is FamilyControls installed there?)"),
            (noGuard.port, 5, "the Guard on \(teacher.name)@127.0.0.1:\(noGuard.port) could not be reached: cannot reach the Guard: "
                + "no Varlink service at \(nothing)/guard.socket: the socket does not exist (is familycontrolsd running?)"),
        ]
        for (port, status, message) in cases {
            let result = try await familyctl(["-H", "\(teacher.name)@127.0.0.1:\(port)", "requests"], as: teacher, keys: keys)
            #expect(result.status == status, "\(result.standardError)")
            #expect(result.standardError.hasPrefix("familyctl: \(message)"), "\(result.standardError)")
            #expect(result.standardError.split(separator: "\n").count == 1, "\(result.standardError)")
        }
        let several = try await familyctl(["-H", "a.example,b.example", "approve", "1"], as: teacher, keys: keys)
        #expect(several.status == 2)
        #expect(several.standardError.hasPrefix("familyctl: approve works on one machine at a time, but -H names 2"))
    }
}

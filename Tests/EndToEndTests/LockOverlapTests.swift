import Foundation
import Testing
import TestSupport

/// One inode, one lock: the child, as a real unprivileged process against the
/// real Guard, tries to get one folder or one file covered by two approvals,
/// so that lifting one leaves the other saying `locked` over something it can
/// change. And a lock that cannot be lifted whole stays recorded until it is.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct LockOverlapTests {
    @Test func renamedFolderCannotBeApprovedTwice() async throws {
        try await withGuard { guardd in
            let root = "\(guardd.appsRoot)/\(guardd.child.name)"
            let first = try guardd.installDemo(for: guardd.child, appID: "org.example.X")
            try await guardd.shell("cp '\(first)/org.example.X.desktop' '\(first)/org.example.Y.desktop'").requireSuccess()
            let second = "\(root)/org.example.Y"

            // The request for X waits; the child renames the folder to Y and asks again.
            let appX = try guardd.startApp(executable: first + "/familycontrols-demo")
            defer { appX.stop() }
            let idX = try await appX.waitForPendingRequest()
            try await guardd.shell("mv '\(first)' '\(second)'").requireSuccess()
            let appY = try guardd.startApp(executable: second + "/familycontrols-demo")
            defer { appY.stop() }
            // Refused at once, or shown the alert and made to wait, as before.
            _ = await eventually { !appY.process.isRunning || appY.standardError.contains("Allow “") }
            let idY = appY.process.isRunning ? try await appY.waitForPendingRequest() : nil

            let password = "\(guardd.guardian.password ?? "")\n"
            try await guardd.familyctlAsGuardian(["approve", String(idX), "--stdin"], input: password).requireSuccess()
            #expect(await appX.exitStatus() == 0, "\(appX.standardError)")
            if let idY {
                _ = try await guardd.familyctlAsGuardian(["approve", String(idY), "--stdin"], input: password)
            }
            appY.endInput()
            let statusY = await appY.exitStatus()
            #expect(idY == nil, "a second request for a folder already waiting under org.example.X was made pending")
            #expect(statusY != 0)
            #expect(appY.standardError.contains("org.example.X"), "the refusal names the other app: \(appY.standardError)")
            #expect(try await guardd.storedStatus(appID: "org.example.Y") != "approved")

            // Root lifts X: nothing may still call the folder locked, and the child may delete it.
            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", "org.example.X"]).requireSuccess()
            let lockY = try await guardd.lock(of: "org.example.Y")
            let deleted = try await guardd.shell("rm -rf '\(second)'").succeeded
            #expect(!(lockY == "locked" && deleted), "org.example.Y read locked while the child deleted it")
        }
    }

    @Test func hardLinkSharedByTwoAppsIsRefused() async throws {
        try await withGuard { guardd in
            let appA = try guardd.installDemo(for: guardd.child, appID: "org.example.A")
            let appB = try guardd.installDemo(for: guardd.child, appID: "org.example.B")
            try await guardd.shell("rm '\(appB)/familycontrols-demo' && ln '\(appA)/familycontrols-demo' '\(appB)/familycontrols-demo'")
                .requireSuccess()

            let resultA = try await guardd.requestApproved(executable: appA + "/familycontrols-demo")
            let resultB = try await guardd.requestApproved(executable: appB + "/familycontrols-demo")
            #expect(resultA.status != 0, "a program with a second name outside its app was approved")
            #expect(resultA.standardError.contains("familycontrols-demo: has 2 hard links"), "\(resultA.standardError)")
            #expect(resultB.status != 0, "a program another app shares was approved")
            #expect(try await guardd.storedStatus(appID: "org.example.B") != "approved")

            // Root lifts A: B must not read locked over a program the child can rewrite.
            if try await guardd.storedStatus(appID: "org.example.A") == "approved" {
                try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", "org.example.A"]).requireSuccess()
            }
            let lockB = try await guardd.lock(of: "org.example.B")
            let rewritten = try await guardd.shell("echo changed > '\(appB)/familycontrols-demo'").succeeded
            #expect(!(lockB == "locked" && rewritten), "org.example.B read locked while the child rewrote its program")
        }
    }

    @Test func leaseDuringUnlockKeepsRecordUntilVerifyFinishes() async throws {
        try await withGuard { guardd in
            try await guardd.requestApproved().requireSuccess()
            let data = "\(guardd.appDirectory)/\(GuardFixture.appID).desktop"
            #expect((inodeFlags(data) ?? 0) & 0x10 != 0)

            // The child takes a write lease on its own (locked) file and ignores
            // the break. A write lease needs the file open nowhere else: tried
            // again for a while (EAGAIN) while a moment's reader, the Guard's
            // or one of another test's processes on a loaded machine, lets go.
            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            holder.arguments = ["--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)", "--clear-groups",
                                "/usr/bin/python3", "-c", """
                                    import errno, fcntl, os, signal, sys, time
                                    signal.signal(signal.SIGIO, signal.SIG_IGN)
                                    fd = os.open(sys.argv[1], os.O_RDONLY)
                                    deadline = time.time() + 20
                                    while True:
                                        try:
                                            fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)
                                            break
                                        except OSError as error:
                                            if error.errno != errno.EAGAIN or time.time() > deadline: raise
                                            time.sleep(0.1)
                                    print('leased', flush=True)
                                    time.sleep(60)
                                    """, data]
            let output = Pipe()
            holder.standardOutput = output
            try holder.run()
            defer { kill(holder) }
            let line = String(decoding: output.fileHandleForReading.readData(ofLength: 7), as: UTF8.self)
            #expect(line == "leased\n", "the child could not take the lease")

            try await guardd.familyctl(["revoke", "--user", guardd.child.name, "--app", GuardFixture.appID]).requireSuccess()
            // Reading its flags would open it, which the lease refuses; unlink opens nothing.
            #expect(try await guardd.shell("rm -f '\(data)'").status != 0, "the lease kept the unlock from clearing it")
            let left = try await journaledLockState(guardd)
            #expect(left == "unlocking", "the lock record must stay until every flag is cleared, found \(left)")
            let report = try await guardd.familyctl(["locks", "verify", "--no-repair"])
            #expect(report.standardOutput.contains("\(GuardFixture.appID) for \(guardd.child.name) is locked without an approval"),
                    "\(report.standardOutput)")

            kill(holder)
            let verify = try await guardd.familyctl(["locks", "verify"])
            #expect(verify.standardOutput.contains("unlocking"), "\(verify.standardOutput)")
            #expect((inodeFlags(data) ?? 0) & 0x10 == 0, "locks verify finishes the unlock")
            #expect(try await journaledLockState(guardd) == "", "the record goes once the unlock is whole")
            #expect(try await guardd.shell("rm -rf '\(guardd.appDirectory)'").succeeded, "the child may delete it now")
        }
    }

    @Test func periodicVerifyRepairsDrift() async throws {
        try await withGuard(extraConfiguration: "\n[Locks]\nVerifyInterval=2s\n") { guardd in
            try await guardd.requestApproved().requireSuccess()
            try await guardd.waitUntilReconciled()
            #expect((inodeFlags(guardd.appExecutable) ?? 0) & 0x10 != 0)

            // Root's own `chattr -i`: drift, seen and repaired with no restart and no `locks verify`.
            try await sh("chattr -i '\(guardd.appExecutable)'").requireSuccess()
            let repaired = await eventually(timeout: .seconds(15)) { (inodeFlags(guardd.appExecutable) ?? 0) & 0x10 != 0 }
            #expect(repaired, "the Guard did not repair the drift on its own")
            let logged = await eventually { guardd.log.contains("familycontrols-demo: not immutable (repaired)") }
            #expect(logged, "the repair is logged: \(guardd.log)")
            #expect(try await guardd.shell("echo changed > '\(guardd.appExecutable)'").status != 0)
        }
    }
}

/// The state the Guard's lock journal holds for the child's demo app, read
/// straight from the store; empty when it holds no record.
private func journaledLockState(_ guardd: GuardFixture) async throws -> String {
    let result = try await run("/usr/bin/sqlite3", ["\(guardd.stateDirectory)/familycontrols.db",
                                                   "SELECT state FROM locks WHERE app_id = '\(GuardFixture.appID)'"])
    return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

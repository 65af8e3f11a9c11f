import Foundation
import Testing
import TestSupport

/// The moment of a signed update's swap, raced by the child: a process of
/// the child's holding a descriptor on the approved folder and on the staged
/// one, trying to add `plugins/` to either (or to open them to others) while
/// the Guard renames them. The app's folder after the swap holds exactly
/// what was signed, every entry locked, the top folder the child's again;
/// whatever the child managed to add is moved out into the app root.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root and the built products"))
struct UpdateSwapWindowTests {
    /// A Python racer run as the child: opens the folders it is given, says
    /// "ready", then (in mode `locked`, once every folder is immutable, as an
    /// attacker who must not spoil the signature would; in mode `taken`, once
    /// every folder is root's, and for one second) tries `mkdir plugins`
    /// and a `chmod`, which would let it open the folder to anyone, in each
    /// through its descriptor until `STOPFILE` exists, and prints what it managed.
    static let racer = """
        import os, sys, json, time, fcntl, array
        stop, mode = sys.argv[1], sys.argv[2]
        fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in sys.argv[3:]]
        print("ready", flush=True)
        def immutable(fd):
            flags = array.array("l", [0])
            fcntl.ioctl(fd, 0x80086601, flags)
            return flags[0] & 0x10
        deadline = time.monotonic() + 120
        while mode == "locked" and not all(immutable(fd) for fd in fds) and not os.path.exists(stop) and time.monotonic() < deadline:
            time.sleep(0.001)
        while mode == "taken" and not all(os.fstat(fd).st_uid == 0 for fd in fds) and time.monotonic() < deadline:
            time.sleep(0.001)
        if mode == "taken":
            deadline = time.monotonic() + 1
        made, chmodded, errors = [], [], set()
        while not os.path.exists(stop) and time.monotonic() < deadline:
            for i, fd in enumerate(fds):
                try:
                    os.mkdir("plugins", dir_fd=fd)
                    made.append(i)
                except OSError as e:
                    errors.add(e.errno)
                try:
                    os.fchmod(fd, 0o755)
                    chmodded.append(i)
                except OSError as e:
                    errors.add(e.errno)
        print(json.dumps({"made": sorted(set(made)), "chmodded": sorted(set(chmodded)), "errors": sorted(errors)}), flush=True)
        """

    /// Starts the racer as the child on `folders`, stopped by `stopFile`.
    private func startRacer(_ guardd: GuardFixture, folders: [String], stopFile: String,
                            once: String = "now") async throws -> RunningApp {
        let script = "\(guardd.directory)/racer.py"
        try Self.racer.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o644)
        let racer = try RunningApp(arguments: ["/usr/bin/setpriv", "--reuid=\(guardd.child.uid)", "--regid=\(guardd.child.gid)",
                                               "--clear-groups", "/usr/bin/python3", script, stopFile, once] + folders)
        #expect(await eventually(timeout: .seconds(10)) { racer.standardOutput.contains("ready") }, "\(racer.standardError)")
        return racer
    }

    /// What the racer managed, once stopped.
    private func stop(_ racer: RunningApp, stopFile: String) async throws -> (made: [Int], chmodded: [Int]) {
        #expect(FileManager.default.createFile(atPath: stopFile, contents: Data()))
        _ = await racer.exitStatus()
        let line = try #require(racer.standardOutput.split(separator: "\n").last)
        let object = try #require((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                                  "the racer said: \(racer.standardOutput) \(racer.standardError)")
        return ((object["made"] as? [Int]) ?? [], (object["chmodded"] as? [Int]) ?? [])
    }

    /// The app's folder holds what was signed, locked whole, the child's, with
    /// no `plugins/`; `locks verify` finds nothing to repair.
    private func expectSwappedWhole(_ guardd: GuardFixture, version: String) async throws {
        let app = guardd.appDirectory
        #expect(try String(contentsOfFile: "\(app)/VERSION", encoding: .utf8) == "\(version)\n")
        #expect(!FileManager.default.fileExists(atPath: "\(app)/plugins"), "the child's folder is in the approved app")
        #expect(try TreeSnapshot.take(app).unlockedItems().isEmpty, "the app is not locked whole")
        var status = stat()
        #expect(lstat(app, &status) == 0)
        #expect(status.st_uid == guardd.child.uid, "the app's folder is not the child's again")
        #expect(status.st_mode & 0o7777 == 0o755, "the app's folder's mode changed: \(String(status.st_mode & 0o7777, radix: 8))")
        let verified = try await guardd.familyctl(["locks", "verify"])
        #expect(verified.status == 0, "\(verified.standardOutput)")
        #expect(!verified.standardOutput.contains("repaired"), "\(verified.standardOutput)")
    }

    /// While the Guard holds the two folders for the rename, the child can
    /// add nothing to either, nor open either to others, through descriptors
    /// it opened while they were locked.
    @Test func theChildCannotAddToEitherFolderWhileTheyAreSwapped() async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()
            // Descriptors opened while the folders are locked; the racer tries for one second once the Guard holds them.
            let stopFile = "\(guardd.directory)/stop-racer"
            let racer = try await startRacer(guardd, folders: [guardd.appDirectory, guardd.stagingDirectory],
                                             stopFile: stopFile, once: "taken")
            guardd.stop()
            try await guardd.start(environment: ["FAMILYCONTROLSD_TEST_UPDATE_PAUSE": "swap-taken:20"])
            try await guardd.waitUntilReconciled()
            let updating = try RunningApp(arguments: guardd.commandLine(as: guardd.child, executable: guardd.appExecutable,
                                                                       ["update", "--stdin"]))
            defer { updating.stop() }
            #expect(await eventually { guardd.log.contains("update: paused at swap-taken") }, "never paused: \(guardd.log)")
            #expect(await eventually(timeout: .seconds(30)) { racer.standardOutput.contains("made") }, "\(racer.standardError)")
            #expect(!guardd.log.contains("swapped in"), "the pause ended before the racer stopped; the test proves nothing")
            let (made, chmodded) = try await stop(racer, stopFile: stopFile)
            #expect(await updating.exitStatus() == 0, "\(updating.standardError)")
            #expect(made.isEmpty, "the child added plugins/ to a folder being swapped")
            #expect(chmodded.isEmpty, "the child changed the mode of a folder being swapped")
            try await expectSwappedWhole(guardd, version: "2")
        }
    }

    /// What the child adds in the moment a folder is given back to it (its
    /// owner again, not yet locked) is moved out into the app root, so the
    /// approved app holds what was signed; nothing the child made is lost.
    @Test func whatTheChildAddsAsTheFolderIsGivenBackIsMovedOut() async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            try await guardd.stageUpdate(version: "2", signingKey: key).requireSuccess()
            let stopFile = "\(guardd.directory)/stop-racer"
            // Held since before the update: the staged folder becomes the app's.
            let racer = try await startRacer(guardd, folders: [guardd.stagingDirectory], stopFile: stopFile, once: "locked")
            guardd.stop()
            // 10 s for the racer to get in: 2 s were too few for it on a machine running the whole suite.
            try await guardd.start(environment: ["FAMILYCONTROLSD_TEST_UPDATE_PAUSE": "swap-given-back:10"])
            try await guardd.waitUntilReconciled()
            let updated = try await guardd.app(["update", "--stdin"])
            #expect(updated.status == 0, "\(updated.standardError)")
            let (made, _) = try await stop(racer, stopFile: stopFile)
            #expect(made == [0], "the racer never got in as the folder was given back; the test proves nothing")
            try await expectSwappedWhole(guardd, version: "2")
            let movedOut = "\(guardd.appsRoot)/\(guardd.child.name)/.\(GuardFixture.appID).added.1"
            #expect(FileManager.default.fileExists(atPath: movedOut), "what the child added is lost")
            #expect(guardd.log.contains("during the swap, was moved out to"), "\(guardd.log)")
        }
    }

    /// The attack as it was found: no pause, a racer spinning on descriptors
    /// of both folders through several signed updates. The approved app
    /// never ends up holding a folder of the child's.
    @Test func aRacingChildNeverLeavesAFolderOfItsOwnInTheApprovedApp() async throws {
        try await withGuard { guardd in
            let key = try await guardd.declareUpdateKey()
            try await guardd.requestApproved().requireSuccess()
            for version in 2...6 {
                _ = try await guardd.shell("rm -rf '\(guardd.stagingDirectory)'")
                try await guardd.stageUpdate(version: String(version), signingKey: key).requireSuccess()
                let stopFile = "\(guardd.directory)/stop-racer-\(version)"
                let racer = try await startRacer(guardd, folders: [guardd.appDirectory, guardd.stagingDirectory],
                                                 stopFile: stopFile, once: "locked")
                let updated = try await guardd.app(["update", "--stdin"])
                _ = try await stop(racer, stopFile: stopFile)
                #expect(updated.status == 0, "\(updated.standardError)\n\(guardd.log)")
                try await expectSwappedWhole(guardd, version: String(version))
            }
        }
    }
}

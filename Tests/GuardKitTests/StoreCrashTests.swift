import Foundation
import GuardKit
import Testing
import GuardStore

/// A test process that saves authorizations until the test kills it, runs in
/// its own process because a crash is the point.
@Suite("Store: crash durability")
struct StoreCrashTests {
    /// Set in the child's environment to the store directory it writes to.
    static let directoryVariable = "FAMILYCONTROLS_STORE_CRASH_DIRECTORY"
    /// The child reports each save that returned on this descriptor.
    static let acknowledgementDescriptor: CInt = 3

    @Test("every save that returned before SIGKILL is there after reopening, with its audit event")
    func survivesSIGKILL() throws {
        try withTemporaryStoreDirectory { temporary throws in
            let directory = temporary + "/store"
            let child = try CrashChild(directory: directory)
            let acknowledged: Int
            do {
                acknowledged = try child.waitForAcknowledgements(30, timeout: .seconds(60))
            } catch {
                kill(child.pid, SIGKILL)
                throw StoreFixtureError("\(error); the child ended with \(child.wait())")
            }
            #expect(kill(child.pid, SIGKILL) == 0)
            let status = child.wait()
            #expect(status.signal == SIGKILL, "the child ended with \(status) before it was killed")

            // The child never closed its connection: the saves are in the WAL alone.
            let wal = directory + "/" + Store.fileName + "-wal"
            #expect(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0 > 0)

            let store = try Store.open(directory: directory, logger: .quiet)
            let records = try store.authorizations()
            #expect(records.count >= acknowledged)
            let appIDs = Set(records.map(\.appID))
            let missing = (0..<acknowledged).filter { !appIDs.contains("app-\($0)") }
            #expect(missing == [], "saves that returned but were lost")
            #expect(try store.auditEvents(limit: 100_000).count == records.count, "an authorization without its audit event")
            #expect(try store.integrityCheck() == ["ok"])
        }
    }
}

@Suite("StoreCrashChild")
struct StoreCrashChild {
    @Test("writes until killed (runs only as the child of the crash test)",
          .enabled(if: ProcessInfo.processInfo.environment[StoreCrashTests.directoryVariable] != nil,
                   "the crash test starts this as a child process and kills it; on its own it has nothing to do"))
    func writeUntilKilled() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[StoreCrashTests.directoryVariable])
        let store = try Store.open(directory: directory, logger: .quiet)
        // Bounded, so a parent that never kills cannot leave this running forever.
        for index in 0..<100_000 {
            try store.save(.sample(appID: "app-\(index)"), audit: .sample(appID: "app-\(index)"))
            var value = UInt32(index)
            guard write(StoreCrashTests.acknowledgementDescriptor, &value, 4) == 4 else { return }
        }
    }
}

/// The test binary run again with only ``StoreCrashChild`` selected.
private struct CrashChild {
    let pid: pid_t
    private let acknowledgements: CInt

    init(directory: String) throws {
        var ends: [CInt] = [-1, -1]
        guard pipe(&ends) == 0 else { throw StoreFixtureError("pipe: errno \(errno)") }
        // Close-on-exec, so other processes the tests start do not hold the pipe open.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(ends[1]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy, so the child keeps only descriptor 3.
        posix_spawn_file_actions_adddup2(&actions, ends[1], StoreCrashTests.acknowledgementDescriptor)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        let executable = "/proc/self/exe"
        let arguments = [executable, "--testing-library", "swift-testing", "--filter", "StoreCrashChild"]
        var environment = ProcessInfo.processInfo.environment
        environment[StoreCrashTests.directoryVariable] = directory
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }

        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard result == 0 else {
            close(ends[0])
            throw StoreFixtureError("posix_spawn \(executable): errno \(result)")
        }
        self.pid = pid
        self.acknowledgements = ends[0]
    }

    /// Reads acknowledgements until `count` arrived.
    /// - Returns: how many saves the child reported as returned.
    func waitForAcknowledgements(_ count: Int, timeout: Duration) throws -> Int {
        let deadline = ContinuousClock.now + timeout
        var received = 0
        var value: UInt32 = 0
        while received < count {
            var poller = pollfd(fd: acknowledgements, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero, poll(&poller, 1, CInt(remaining.components.seconds * 1000 + 1)) > 0 else {
                throw StoreFixtureError("the child acknowledged \(received) saves before the timeout")
            }
            let bytes = read(acknowledgements, &value, 4)
            guard bytes == 4 else {
                throw StoreFixtureError("the child stopped after \(received) saves (read returned \(bytes))")
            }
            received += 1
        }
        return received
    }

    /// Reaps the child and closes the pipe.
    func wait() -> (signal: CInt?, exitCode: CInt?) {
        defer { close(acknowledgements) }
        var status: CInt = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (nil, (status >> 8) & 0xff) : (signal, nil)
    }
}

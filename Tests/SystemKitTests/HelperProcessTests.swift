#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization
import SystemKit
import Testing

/// A helper process starts with only what it is given, is reaped however it
/// ends, and never outlives its owner's hold on it.
@Suite("Helper processes")
struct HelperProcessTests {
    /// Runs `script` in `/bin/sh` as a helper with `socket` as its descriptor 3.
    private func shell(_ script: String, environment: [String] = ["PATH=/usr/bin:/bin"],
                       socket: CInt) throws -> HelperProcess {
        try HelperProcess.spawn("/bin/sh", arguments: ["-c", script], environment: environment, descriptor: socket)
    }

    @Test func itKeepsOnlyItsSocketStandardErrorAndTheEnvironmentGiven() throws {
        let (mine, theirs) = try Socket.makePacketPair()
        // Open here and not close-on-exec: the helper must still not get it.
        let stray = dup(mine.rawValue)
        defer { close(stray) }
        #expect(stray > 4)
        let helper = try shell(#"printf '%s|%s' "$(ls /proc/self/fd | sort -n | tr '\n' ' ')" "$(env | sort | tr '\n' ' ')" >&3"#,
                               environment: ["PATH=/usr/bin:/bin", "ONLY=this"], socket: theirs.rawValue)
        theirs.close()
        var bytes = [UInt8](repeating: 0, count: 4096)
        let length = try Socket.receivePacket(mine.rawValue, into: &bytes)
        let text = String(decoding: bytes[0..<length], as: UTF8.self)
        let parts = text.split(separator: "|", omittingEmptySubsequences: false)
        // 0, 1, 2, 3, and the descriptor `ls` opens to read the folder.
        let descriptors = parts.first.map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
        #expect(Array(descriptors.prefix(4)) == [0, 1, 2, 3] && descriptors.count <= 5, "\(text)")
        #expect(parts.last.map(String.init) == "ONLY=this PATH=/usr/bin:/bin PWD=\(currentDirectory()) ", "\(text)")
        #expect(try helper.waitForExit(until: .now.advanced(by: .seconds(10))) == .exited(0))
    }

    @Test func aHelperThatCrashesIsReapedWithItsSignal() throws {
        let (_, theirs) = try Socket.makePacketPair()
        let helper = try shell("kill -SEGV $$", socket: theirs.rawValue)
        let exit = try helper.waitForExit(until: .now.advanced(by: .seconds(10)))
        #expect(exit == .killed(signal: SIGSEGV, dumpedCore: false) || exit == .killed(signal: SIGSEGV, dumpedCore: true))
        #expect(exit?.description.hasPrefix("was killed by SIGSEGV") == true)
    }

    @Test func aHelperThatHangsIsStillRunningAtTheDeadlineThenKilledAndReaped() throws {
        let (_, theirs) = try Socket.makePacketPair()
        let helper = try shell("exec sleep 600", socket: theirs.rawValue)
        let pid = helper.pid
        #expect(try helper.waitForExit(until: .now.advanced(by: .milliseconds(200))) == nil)
        #expect(helper.kill() == .killed(signal: SIGKILL, dumpedCore: false))
        // Reaped: no zombie is left under this pid.
        #expect(Glibc.kill(pid, 0) == -1 && errno == ESRCH)
    }

    /// A program (which cannot ask for it itself) is killed when the thread
    /// that started it ends, as it is when its owner is killed mid-job.
    @Test func aHelperIsKilledWhenTheThreadThatStartedItEnds() throws {
        let (_, theirs) = try Socket.makePacketPair()
        let descriptor = theirs.rawValue
        let started = DispatchSemaphore(value: 0)
        let pid = Mutex<pid_t>(0)
        Thread.detachNewThread {
            // Let go without the kill a release would send: only the thread's end is left to end it.
            if let helper = try? HelperProcess.spawn("/bin/sleep", arguments: ["600"], environment: [],
                                                     descriptor: descriptor) {
                pid.withLock { $0 = helper.pid }
                _ = Unmanaged.passRetained(helper)
            }
            started.signal()
        }
        started.wait()
        let helper = pid.withLock { $0 }
        try #require(helper > 0, "the helper did not start")
        var status: CInt = 0
        let deadline = MonotonicInstant.now.advanced(by: .seconds(10))
        while waitpid(helper, &status, WNOHANG) == 0, MonotonicInstant.now < deadline { usleep(20_000) }
        if Glibc.kill(helper, 0) == 0, waitpid(helper, &status, WNOHANG) == 0 {
            Glibc.kill(helper, SIGKILL)
            _ = waitpid(helper, &status, 0)
            Issue.record("the helper outlived the thread that started it by 10 s")
            return
        }
        #expect(status & 0x7f == SIGKILL, "wait status \(status): not killed by SIGKILL")
    }

    @Test func aProgramThatCannotStartIsAnError() throws {
        let (_, theirs) = try Socket.makePacketPair()
        #expect(throws: Errno.self) {
            try HelperProcess.spawn("/nonexistent/helper", arguments: [], environment: [], descriptor: theirs.rawValue)
        }
    }
}

/// The working folder, which `sh` exports as `PWD` on its own.
private func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    return getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? ""
}

#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Process handles")
struct ProcessHandleTests {
    @Test func aPidfdSaysAliveUntilTheChildExitsAndIsReaped() throws {
        let input = try makePipe()
        let child = try ChildProcess(["/bin/sh", "-c", "read line; exit 0"], descriptors: [0: input.read.rawValue])
        input.read.close()
        let pidfd = try #require(ProcessHandle.open(pid: child.pid))
        #expect(fcntl(pidfd.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        #expect(ProcessHandle.isAlive(pidfd: pidfd.rawValue))

        // End of input ends the shell; its pidfd turns readable once it exits.
        input.write.close()
        let exited = try Poll.wait(for: Int16(POLLIN), on: pidfd.rawValue, until: .now + .seconds(20))
        #expect(exited != nil)
        // Exited but not yet reaped: the pid is still its own, not anyone else's.
        #expect(ProcessHandle.isAlive(pidfd: pidfd.rawValue))

        #expect(try child.waitForExit() == 0)
        #expect(!ProcessHandle.isAlive(pidfd: pidfd.rawValue))
    }

    @Test func thereIsNoHandleForAPidNoProcessHas() throws {
        let child = try ChildProcess(["/bin/true"])
        let pid = child.pid
        #expect(try child.waitForExit() == 0)
        // Reaped a moment ago: pids are handed out in increasing order, so it is free.
        #expect(ProcessHandle.open(pid: pid) == nil)
        #expect(ProcessHandle.open(pid: -1) == nil)
    }

    @Test func theTestProcessHasAHandleOnItself() throws {
        let pidfd = try #require(ProcessHandle.open(pid: getpid()))
        #expect(ProcessHandle.isAlive(pidfd: pidfd.rawValue))
    }
}

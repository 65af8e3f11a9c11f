#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import Testing

@Suite("Core dumps")
struct CoreDumpTests {
    @Test func anOrdinaryProcessIsDumpable() {
        #expect(CoreDumps.isDumpable == true)
    }

    /// Runs in a forked child, so the test process itself stays dumpable. The
    /// child makes system calls only, then `_exit`s with a code naming the
    /// first check that failed.
    @Test func disablingMakesTheProcessUndumpableWithNoCoreLimit() throws {
        #expect(CoreDumps.isDumpable == true)
        let pid = fork()
        if pid == 0 {
            guard CoreDumps.isDumpable == true else { _exit(1) }
            do { try CoreDumps.disable() } catch { _exit(2) }
            guard CoreDumps.isDumpable == false else { _exit(3) }
            var limit = rlimit()
            guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0,
                  limit.rlim_cur == 0, limit.rlim_max == 0 else { _exit(4) }
            _exit(0)
        }
        try #require(pid > 0)
        #expect(try ChildProcess(adopting: pid).waitForExit() == 0)
        // The parent is untouched.
        #expect(CoreDumps.isDumpable == true)
    }
}

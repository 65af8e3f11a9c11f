#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Testing

/// Signals that reached the no-op handler, so a test knows it was interrupted.
private let deliveries = Atomic<Int>(0)

/// A SIGUSR1 handler that does nothing, installed without `SA_RESTART`, so a
/// blocked call fails with EINTR instead of the process ending.
private let noOpHandler: Void = {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in deliveries.add(1, ordering: .relaxed) }
    action.sa_flags = 0
    sigemptyset(&action.sa_mask)
    sigaction(SIGUSR1, &action, nil)
}()

/// Runs `body` on a thread of its own while this thread sends it SIGUSR1
/// every few milliseconds, and returns what it returned, how long it took,
/// and how many signals were handled meanwhile.
private func whileInterrupted<R: Sendable>(
    _ body: @escaping @Sendable () -> R
) throws -> (result: R, elapsed: Duration, signals: Int) {
    _ = noOpHandler
    let outcome = Mutex<R?>(nil)
    let before = deliveries.load(ordering: .relaxed)
    let start = ContinuousClock.now
    let thread = try SystemThread.spawn(name: "interrupted") {
        // Threads inherit their creator's mask, and the test runner's threads block most signals.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGUSR1)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        let result = body()
        outcome.withLock { $0 = result }
    }
    while outcome.withLock({ $0 == nil }) {
        pthread_kill(thread.handle, SIGUSR1)
        usleep(5_000)
    }
    thread.join()
    let elapsed = ContinuousClock.now - start
    let result = try #require(outcome.withLock { $0 })
    return (result, elapsed, deliveries.load(ordering: .relaxed) - before)
}

@Suite("Calls interrupted by signals")
struct InterruptionTests {
    @Test func pollKeepsWaitingThroughSignalsUntilItsDeadline() throws {
        let pipe = try makePipe()
        let descriptor = pipe.read.rawValue
        let (result, elapsed, signals) = try whileInterrupted { () -> Result<Int16?, Errno> in
            Result { () throws(Errno) in try Poll.wait(for: Int16(POLLIN), on: descriptor, until: .now + .milliseconds(300)) }
        }
        #expect(signals > 0)
        #expect(try result.get() == nil)
        #expect(elapsed >= .milliseconds(300))
    }

    @Test func aLineReaderTimesOutRatherThanFailingWhenInterrupted() throws {
        let pipe = try makePipe()
        let descriptor = pipe.read.rawValue
        let (result, _, signals) = try whileInterrupted { () -> LineReader.Failure? in
            do throws(LineReader.Failure) {
                _ = try LineReader.readLine(from: descriptor, deadline: .now + .milliseconds(300))
                return nil
            } catch {
                return error
            }
        }
        #expect(signals > 0)
        #expect(result == .timedOut)
    }

    @Test func sleepLastsItsWholeDurationThroughSignals() throws {
        let (_, elapsed, signals) = try whileInterrupted { SystemThread.sleep(for: .milliseconds(300)) }
        #expect(signals > 0)
        #expect(elapsed >= .milliseconds(300))
    }

    /// The one call that does not retry: its callers keep their own timeouts.
    @Test func anInterruptedEpollWaitReturnsNoEvents() throws {
        let epoll = try Epoll()
        let (result, elapsed, _) = try whileInterrupted { () -> Result<Int, Errno> in
            Result { () throws(Errno) in
                try epoll.wait(into: EpollEventBuffer(capacity: 1), timeout: 20_000)
            }
        }
        #expect(try result.get() == 0)
        #expect(elapsed < .seconds(10))
    }
}

@Suite("Reading a line")
struct LineReaderTests {
    @Test func readsOneLineAndLeavesTheRestForTheNextReader() throws {
        let pipe = try makePipe()
        try pipe.write.writeAll(Array("answer\r\nrest".utf8))
        pipe.write.close()
        let line = try LineReader.readLine(from: pipe.read.rawValue, deadline: .now + .seconds(5))
        #expect(line.withUnsafeBytes { Array($0) } == Array("answer".utf8))
        var rest = [UInt8](repeating: 0, count: 16)
        let count = try rest.withUnsafeMutableBytes { try pipe.read.read(into: $0) }
        #expect(Array(rest[..<count]) == Array("rest".utf8))
    }

    @Test func endOfInputBeforeAnythingIsEndOfInput() throws {
        let pipe = try makePipe()
        pipe.write.close()
        #expect(throws: LineReader.Failure.endOfInput) {
            try LineReader.readLine(from: pipe.read.rawValue, deadline: .now + .seconds(5))
        }
    }

    @Test func aLineLongerThanAllowedIsTooLong() throws {
        let pipe = try makePipe()
        try pipe.write.writeAll(Array("0123456789\n".utf8))
        #expect(throws: LineReader.Failure.tooLong) {
            try LineReader.readLine(from: pipe.read.rawValue, maximumLength: 4, deadline: .now + .seconds(5))
        }
    }

    @Test func aBadDescriptorFailsWithEBADF() throws {
        #expect(throws: LineReader.Failure.failed(Errno(EBADF))) {
            try LineReader.readLine(from: 1_000_000, deadline: .now + .seconds(5))
        }
    }
}
